/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * joblimits: the limits a pool child holds itself to, which the kernel
 * enforces (see joblimits.h).
 */
#include "joblimits.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/time.h>

#include "rq_clock.h"

/* The child's private data (VmData) in bytes, 0 if unknown. */
static uint64_t own_data_bytes(void)
{
	char line[256];
	unsigned long long kb = 0;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmData: %llu kB", &kb) == 1)
			break;
	fclose(f);
	return (uint64_t)kb * 1024;
}

/* Lower a soft limit to want, unless the hard limit is lower still. */
static void lower_limit(int resource, rlim_t want)
{
	struct rlimit rl;

	if (getrlimit(resource, &rl) == 0 && (rl.rlim_max == RLIM_INFINITY || want < rl.rlim_max)) {
		rl.rlim_cur = want;
		setrlimit(resource, &rl);
	}
}

/*
 * A child stops by itself even when the parent cannot watch it in time
 * (busy storing a result while Redis is away, stopped, swapped out):
 * SIGALRM at the deadline, SIGXCPU one second of CPU time after it, and,
 * with a memory limit, no private memory beyond twice the limit above what
 * it inherited (RLIMIT_DATA counts memory reserved, not only touched, so it
 * is looser than the parent's resident-set limit).
 */
void rq_joblimits_set(const rq_jobrun_env *env, const rq_jobrun_task *task)
{
	long long left = task->deadline - rq_clock_mono_ms();
	struct itimerval it;

	if (left <= 0)
		raise(SIGALRM);
	memset(&it, 0, sizeof(it));
	it.it_value.tv_sec = (time_t)(left / 1000);
	it.it_value.tv_usec = (suseconds_t)(left % 1000) * 1000;
	setitimer(ITIMER_REAL, &it, NULL);
	lower_limit(RLIMIT_CPU, (rlim_t)(task->job->timeout_ms / 1000 + 2));
	if (env->memory_limit && env->data_limit)
		lower_limit(RLIMIT_DATA, (rlim_t)(own_data_bytes() + 2 * env->memory_limit));
}

/* Before the ref updates: nothing may interrupt them half-way, not even
 * the worker's death (the update finishes; the redelivered job finds it
 * done through its intent). */
void rq_joblimits_lift(void)
{
	struct itimerval it;
	struct rlimit rl;

	prctl(PR_SET_PDEATHSIG, 0);
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_REAL, &it, NULL);
	if (getrlimit(RLIMIT_CPU, &rl) == 0) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_CPU, &rl);
	}
}

/* The limits of what a child does after its result: the job's deadline
 * and CPU time no longer apply (the job is over, and a short job's
 * deadline would cut every consolidation after it), a timer of
 * RQ_JOBRUN_AFTER_MS does, and the child goes with the worker (its death
 * signal set again: it was lifted before a ref update). */
void rq_joblimits_after(void)
{
	struct itimerval it;

	rq_joblimits_lift();
	memset(&it, 0, sizeof(it));
	it.it_value.tv_sec = RQ_JOBRUN_AFTER_MS / 1000;
	setitimer(ITIMER_REAL, &it, NULL);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
}
