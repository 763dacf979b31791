/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The replayq program's subcommands. Each returns the process exit status.
 */
#ifndef RQ_CMDS_H
#define RQ_CMDS_H

int cmd_replay(int argc, char **argv);
int cmd_train(int argc, char **argv);
int cmd_worker(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_submit(int argc, char **argv);
int cmd_result(int argc, char **argv);
int cmd_queue(int argc, char **argv);
int cmd_maintain(int argc, char **argv);

#endif
