#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Signed replays (issue 39), with real keys, a real ssh-agent, a real gpg
# and the real binary: every new commit verifies with `git verify-commit`
# (the installed git and upstream git) for SSH (Ed25519 and RSA, from a key
# file, from the agent, a literal key) and OpenPGP; SSH signatures made in
# process equal git's own (`git commit-tree -S`); signed and unsigned
# commits differ only in the gpgsig header; a repository's own gpg.program,
# user.signingKey and commit.gpgSign are ignored (a program that would
# leave a mark is never run); an encrypted key, a missing program and a
# failing program give their error codes and change nothing; train signs
# its merges; worker jobs with "sign": true give verified commits and
# "signed": true, and a worker without a key refuses them. With
# RQ_TEST_SHA256=1 (rq_repofmt.h's RQ_REPOFMT_SHA256 is 1), in a SHA-256
# repository: the signature goes under "gpgsig-sha256", the commits
# verify with upstream git, and equal upstream `git commit-tree -S`'s.
. "$(dirname "$0")/../lib.sh"
require jq ssh-keygen ssh-agent ssh-add gpg gpgconf redis-server
GITS=(git)
upstream_git && GITS+=("$UPSTREAM_GIT")
export GNUPGHOME=$T/gnupg
trap 'gpgconf --kill all >/dev/null 2>&1; cleanup_all' EXIT
unset SSH_AUTH_SOCK SSH_AGENT_PID

ROOT=$T/root
R=$ROOT/r
git init -q -b main "$R"
commit_file "$R" a.txt a "base"
git -C "$R" tag base
git -C "$R" checkout -q -b topic
commit_file "$R" t1.txt t1 "topic one"
commit_file "$R" t2.txt t2 "topic two"
commit_file "$R" t3.txt t3 "topic three"
git -C "$R" checkout -q -b other base
commit_file "$R" o.txt o "other"
git -C "$R" checkout -q main
commit_file "$R" m.txt m "main moves"
TOPIC=$(git -C "$R" rev-parse topic)

ssh-keygen -q -t ed25519 -N '' -C ed -f "$T/ed"
ssh-keygen -q -t rsa -b 2048 -N '' -C rsa -f "$T/rsa"
ssh-keygen -q -t ed25519 -N secret -C enc -f "$T/enc"
for k in ed rsa enc; do echo "$k $(cat "$T/$k.pub")"; done >"$T/allowed"

reset_topic() { git -C "$R" update-ref refs/heads/topic "$TOPIC"; }
# verified REV N WHO: the N commits from REV down verify with every git,
# signed by WHO (an SSH principal, or the OpenPGP user id)
verified() {
	local g c out
	for g in "${GITS[@]}"; do
		for c in $(git -C "$R" rev-list -n "$2" "$1"); do
			out=$("$g" -C "$R" -c gpg.ssh.allowedSignersFile="$T/allowed" verify-commit "$c" 2>&1) || {
				echo "$g verify-commit $c: $out" >&2
				return 1
			}
			case $out in
			*"for $3 with"* | *"Good signature from \"$3"*) ;;
			*) echo "$g verify-commit $c: $out" >&2 && return 1 ;;
			esac
		done
	done
}
# replay_ssh KEY ARGS...: replay topic onto main signed with KEY (git's
# user.signingKey, gpg.format=ssh); the topic moves
replay_ssh() {
	local key=$1
	shift
	reset_topic
	run_rq -C "$R" -c gpg.format=ssh -c user.signingKey="$key" replay -S "$@" --onto main base..topic
}
packs() { find "$R/.git/objects/pack" -name '*.pack' | wc -l; }
# strip_sig ID: the commit without its gpgsig header
strip_sig() { git -C "$R" cat-file commit "$1" | awk '/^gpgsig /{s=1;next} s&&/^ /{next} {s=0;print}'; }

section "SSH in process: Ed25519 and RSA key files"
replay_ssh "$T/ed"
check_eq "ed25519: exit 0" "0|" "$RC|$ERR"
check "ed25519: the 3 new commits verify with git $(git --version | cut -d' ' -f3) and upstream git" verified topic 3 ed
ED_TIP=$(git -C "$R" rev-parse topic)
# git signs the same commit the same way (ssh-keygen, deterministic Ed25519)
tip_git=$(GIT_COMMITTER_DATE="$(git -C "$R" log -1 --format=%cd --date=raw topic)" \
	GIT_AUTHOR_DATE="$(git -C "$R" log -1 --format=%ad --date=raw topic)" \
	git -C "$R" -c gpg.format=ssh -c user.signingKey="$T/ed" commit-tree -S -p topic~1 \
	-m "topic three" "topic^{tree}")
check_eq "ed25519: the signed commit is git commit-tree -S's, byte for byte" "$tip_git" "$ED_TIP"
replay_ssh "$T/ed"
check_eq "ed25519: a second run gives the same commits (deterministic)" "$ED_TIP" "$(git -C "$R" rev-parse topic)"
replay_ssh "$T/rsa" --format=json
check_eq "rsa: exit 0, signed: true" "0|true" "$RC|$(jq -r .signed <<<"$OUT")"
check "rsa: the 3 new commits verify with both gits" verified topic 3 rsa
RSA_TIP=$(git -C "$R" rev-parse topic)
tip_git=$(GIT_COMMITTER_DATE="$(git -C "$R" log -1 --format=%cd --date=raw topic)" \
	GIT_AUTHOR_DATE="$(git -C "$R" log -1 --format=%ad --date=raw topic)" \
	git -C "$R" -c gpg.format=ssh -c user.signingKey="$T/rsa" commit-tree -S -p topic~1 \
	-m "topic three" "topic^{tree}")
check_eq "rsa: the signed commit is git commit-tree -S's, byte for byte" "$tip_git" "$RSA_TIP"

section "signed and unsigned differ only in gpgsig"
reset_topic
run_rq -C "$R" replay --ref-action=print --onto main base..topic
UNSIGNED_TIP=$(awk '{print $3}' <<<"$OUT")
check "unsigned: no gpgsig" bash -c "! git -C '$R' cat-file commit $UNSIGNED_TIP | grep -q '^gpgsig'"
map=""
same=1
for k in 0 1 2; do
	s=$(git -C "$R" rev-parse "$ED_TIP~$k") u=$(git -C "$R" rev-parse "$UNSIGNED_TIP~$k")
	[ "$(strip_sig "$s" | sed "s/$(git -C "$R" rev-parse "$s~1")/PARENT/")" = \
		"$(git -C "$R" cat-file commit "$u" | sed "s/$(git -C "$R" rev-parse "$u~1")/PARENT/")" ] || same=0
done
check_eq "each signed commit without its gpgsig is the unsigned one (parents aside)" 1 "$same"
check_eq "the first commits differ only in gpgsig (same parent)" \
	"$(git -C "$R" cat-file commit "$UNSIGNED_TIP~2")" "$(strip_sig "$ED_TIP~2")"
check_eq "the header sits at the end of the header, as git puts it" "committer|gpgsig" \
	"$(git -C "$R" cat-file commit "$ED_TIP" | awk '/^$/{exit} /^[a-z]/{print $1}' | tail -2 | paste -sd'|')"

section "the ssh-agent: a public key file, a literal key, an encrypted key"
eval "$(ssh-agent -s -a "$T/agent.sock")" >/dev/null
BG_PIDS+=("$SSH_AGENT_PID")
ssh-add -q "$T/ed" "$T/rsa" 2>/dev/null
replay_ssh "$T/ed.pub"
check_eq "agent, ed25519: exit 0, the commits of the key file" "0|$ED_TIP" "$RC|$(git -C "$R" rev-parse topic)"
check "agent, ed25519: the commits verify" verified topic 3 ed
replay_ssh "$T/rsa.pub"
check_eq "agent, rsa (rsa-sha2-512): exit 0, the commits of the key file" "0|$RSA_TIP" "$RC|$(git -C "$R" rev-parse topic)"
check "agent, rsa: the commits verify" verified topic 3 rsa
replay_ssh "key::$(cat "$T/ed.pub")"
check_eq "agent, a literal key::: the same commits" "0|$ED_TIP" "$RC|$(git -C "$R" rev-parse topic)"
replay_ssh "$T/enc" --format=json
check_eq "encrypted key, not in the agent: sign_key, exit 128" "128|sign_key" "$RC|$(jq -r .error.code <<<"$OUT")"
check_contains "... saying to use an agent" "load it into an ssh-agent (ssh-add)" "$ERR"
check_eq "... and the topic did not move" "$TOPIC" "$(git -C "$R" rev-parse topic)"
printf '#!/bin/sh\necho secret\n' >"$T/askpass" && chmod +x "$T/askpass"
SSH_ASKPASS=$T/askpass SSH_ASKPASS_REQUIRE=force ssh-add -q "$T/enc" </dev/null 2>/dev/null
replay_ssh "$T/enc"
check_eq "encrypted key held by the agent: exit 0" "0|" "$RC|$ERR"
check "... the commits verify" verified topic 3 enc
(SSH_AUTH_SOCK=$T/agent.sock "$REPLAYQ" run --repo-root="$ROOT" --sign-agent \
	<<<'{"v":1,"id":"agent-first","repo":"r","mode":"onto","target":"main","revisions":["base..other"],"ref":"refs/heads/by-agent","ref_action":"update","sign":true}' \
	>"$T/agent-run.out" 2>"$T/agent-run.err")
check_eq "run --sign-agent (the agent's first key): ok, signed" "ok|true" "$(jq -r '"\(.status)|\(.signed)"' "$T/agent-run.out")"
check "... the commit verifies" verified refs/heads/by-agent 1 ed
kill "$SSH_AGENT_PID"
unset SSH_AUTH_SOCK SSH_AGENT_PID

section "OpenPGP through gpg"
mkdir -m 700 "$GNUPGHOME"
gpg --batch --quiet --passphrase '' --quick-gen-key "$GIT_COMMITTER_NAME <$GIT_COMMITTER_EMAIL>" ed25519 sign never 2>/dev/null
reset_topic
run_rq -C "$R" replay -S --onto main base..topic
check_eq "openpgp (the committer's key, as git): exit 0" "0|" "$RC|$ERR"
check "openpgp: the 3 new commits verify with both gits" verified topic 3 "$GIT_COMMITTER_NAME"

section "errors: a missing program, a failing program"
printf '#!/bin/sh\ncat >/dev/null\necho "gpg: signing failed: No secret key" >&2\nexit 2\n' >"$T/failing-gpg"
chmod +x "$T/failing-gpg"
n_packs=$(packs)
for prog in "$T/no-such-gpg" "$T/failing-gpg"; do
	reset_topic
	run_rq -C "$R" -c gpg.program="$prog" replay -S --format=json --onto main base..topic
	check_eq "$(basename "$prog"): sign_failed, exit 128" "128|sign_failed" "$RC|$(jq -r .error.code <<<"$OUT")"
	check_eq "$(basename "$prog"): nothing applied" "$TOPIC|$n_packs" "$(git -C "$R" rev-parse topic)|$(packs)"
	check "$(basename "$prog"): nothing left behind" no_litter "$R"
done
check_contains "the failing program's words are in the error" "No secret key" "$ERR"

section "a repository's own signing configuration is ignored"
printf '#!/bin/sh\ntouch "%s/mark"\nexit 1\n' "$T" >"$T/mark-gpg"
chmod +x "$T/mark-gpg"
REPO_VARS=(gpg.program gpg.openpgp.program gpg.ssh.program gpg.x509.program)
for v in "${REPO_VARS[@]}"; do git -C "$R" config "$v" "$T/mark-gpg"; done
git -C "$R" config user.signingKey "$T/rsa"
git -C "$R" config commit.gpgSign true
git -C "$R" config gpg.format ssh
# the mark works: git itself runs the repository's program
git -C "$R" -c gpg.format=openpgp commit-tree -S -m x "main^{tree}" >/dev/null 2>&1
check "git runs the repository's gpg.program (the mark appears)" test -e "$T/mark"
rm -f "$T/mark"
reset_topic
run_rq -C "$R" replay --onto main base..topic
check_eq "commit.gpgSign in the repository: exit 0, not signed" "0|0" \
	"$RC|$(git -C "$R" cat-file commit topic | grep -c '^gpgsig')"
printf '[gpg]\n\tformat = ssh\n[user]\n\tsigningKey = %s\n' "$T/ed" >"$T/global.cfg"
reset_topic
GIT_CONFIG_GLOBAL=$T/global.cfg run_rq -C "$R" replay -S --onto main base..topic
check_eq "-S: the global key signs, not the repository's" "0|$ED_TIP" "$RC|$(git -C "$R" rev-parse topic)"
reset_topic
run_rq -C "$R" replay -S --onto main --ref=refs/heads/pgp-in-hostile base..topic
check_eq "-S, openpgp: exit 0" "0" "$RC"
check "the repository's programs never ran (no mark)" test ! -e "$T/mark"
# (git verify-commit would run the repository's program: its settings go first)
for v in "${REPO_VARS[@]}" user.signingKey commit.gpgSign gpg.format; do git -C "$R" config --unset "$v"; done
check "... gpg signed them" verified refs/heads/pgp-in-hostile 3 "$GIT_COMMITTER_NAME"

section "-S<key>, --no-gpg-sign and commit.gpgSign"
reset_topic
run_rq -C "$R" -c gpg.format=ssh -c user.signingKey="$T/rsa" replay -S"$T/ed" --onto main base..topic
check_eq "-S<key> wins over user.signingKey" "0|$ED_TIP" "$RC|$(git -C "$R" rev-parse topic)"
reset_topic
run_rq -C "$R" -c gpg.format=ssh -c user.signingKey="$T/ed" -c commit.gpgSign=true replay --onto main base..topic
check_eq "-c commit.gpgSign=true signs" "0|$ED_TIP" "$RC|$(git -C "$R" rev-parse topic)"
reset_topic
run_rq -C "$R" -c gpg.format=ssh -c user.signingKey="$T/ed" -c commit.gpgSign=true replay --no-gpg-sign --onto main base..topic
check_eq "--no-gpg-sign wins over commit.gpgSign" "0|$UNSIGNED_TIP" "$RC|$(git -C "$R" rev-parse topic)"

section "train signs its merges and its picks"
reset_topic
run_rq -C "$R" -c gpg.format=ssh -c user.signingKey="$T/ed" train --target=main --method=merge -S --format=json t=base..topic o=base..other
check_eq "train --method=merge -S: exit 0, signed" "0|true" "$RC|$(jq -r .signed <<<"$OUT")"
check "the two merge commits verify" verified refs/train/main/o 1 ed
check "... both" verified refs/train/main/t 1 ed
check_eq "... and are merges" 2 "$(git -C "$R" rev-list --merges refs/train/main/o | wc -l)"
run_rq -C "$R" -c gpg.format=ssh -c user.signingKey="$T/rsa" train --target=main -S --ref-prefix=refs/rb/ t=base..topic o=base..other
check "train --method=rebase -S: the 4 picks verify" verified refs/rb/o 4 rsa

section "worker jobs"
# signed_job ID REF: a job that moves REF to topic replayed onto main, signed
signed_job() {
	echo '{"v":1,"id":"'"$1"'","repo":"r","mode":"onto","target":"main","revisions":["base..topic"],"ref":"refs/heads/'"$2"'","ref_action":"update","sign":true}'
}
signed_job run-1 by-run | "$REPLAYQ" run --repo-root="$ROOT" --sign-key="$T/ed" >"$T/run.out" 2>"$T/run.err"
check_eq "run --sign-key: ok, applied, signed" "ok|true|true" "$(jq -r '"\(.status)|\(.applied)|\(.signed)"' "$T/run.out")"
check "... its 3 commits verify" verified refs/heads/by-run 3 ed
signed_job run-2 none | "$REPLAYQ" run --repo-root="$ROOT" >"$T/run2.out" 2>&1
check_eq "a worker without a key: sign_unavailable, nothing moved" "error|sign_unavailable|" \
	"$(jq -r '"\(.status)|\(.error.code)|"' "$T/run2.out")$(git -C "$R" rev-parse -q --verify refs/heads/none)"
start_redis
start_worker ws --repo-root="$ROOT" --jobs=1 --queue=sq --sign-key="$T/rsa"
worker_started ws
run_rq submit --queue=sq --wait=60 <<<"$(signed_job worker-1 by-worker)"
check_eq "worker --sign-key: ok, signed" "0|ok|true" "$RC|$(jq -r '"\(.status)|\(.signed)"' <<<"$OUT")"
check "... its 3 commits verify" verified refs/heads/by-worker 3 rsa
run_rq submit --queue=sq --wait=60 <<<'{"v":1,"id":"worker-2","repo":"r","mode":"onto","target":"main","revisions":["base..other"]}'
check_eq "an unsigned job on that worker: ok, no signed field, no gpgsig" "ok|null|0" \
	"$(jq -r '"\(.status)|\(.signed)"' <<<"$OUT")|$(git -C "$R" cat-file commit "$(jq -r '.updates[0].new' <<<"$OUT")" | grep -c '^gpgsig')"
check_workers_stop "$WORKER_PID"
check "no sanitizer report" sanitizer_clean "$T/ws.log" "$T/run.err"
run_rq run --repo-root="$ROOT" --sign-key="$T/enc" </dev/null
check_eq "worker with an encrypted key: exit 128, said at start" "128" "$RC"
check_contains "... saying to use an agent" "load it into an ssh-agent" "$ERR"
run_rq run --repo-root="$ROOT" --sign-format=pgp </dev/null
check_eq "--sign-format=pgp: a usage error" "129" "$RC"

if [ "${RQ_TEST_SHA256:-0}" = 1 ] && upstream_git; then
	section "a SHA-256 repository: gpgsig-sha256"
	S=$ROOT/s256
	"$UPSTREAM_GIT" init -q -b main --object-format=sha256 "$S"
	commit_file "$S" a.txt a "base"
	"$UPSTREAM_GIT" -C "$S" checkout -q -b topic
	commit_file "$S" t1.txt t1 "topic one"
	"$UPSTREAM_GIT" -C "$S" checkout -q main
	commit_file "$S" m.txt m "main moves"
	run_rq -C "$S" -c gpg.format=ssh -c user.signingKey="$T/ed" replay -S --onto main main..topic
	check_eq "sha256: exit 0" "0|" "$RC|$ERR"
	c=$("$UPSTREAM_GIT" -C "$S" rev-parse topic)
	check_eq "sha256: a 64-digit id" 64 "${#c}"
	check_eq "sha256: the header is gpgsig-sha256" "committer|gpgsig-sha256" \
		"$("$UPSTREAM_GIT" -C "$S" cat-file commit "$c" | awk '/^$/{exit} /^[a-z]/{print $1}' | tail -2 | paste -sd'|')"
	check "sha256: upstream git verify-commit" "$UPSTREAM_GIT" -C "$S" \
		-c gpg.ssh.allowedSignersFile="$T/allowed" verify-commit "$c"
	tip_git=$(GIT_COMMITTER_DATE="$("$UPSTREAM_GIT" -C "$S" log -1 --format=%cd --date=raw "$c")" \
		GIT_AUTHOR_DATE="$("$UPSTREAM_GIT" -C "$S" log -1 --format=%ad --date=raw "$c")" \
		"$UPSTREAM_GIT" -C "$S" -c gpg.format=ssh -c user.signingKey="$T/ed" commit-tree -S \
		-p main -m "topic one" "$c^{tree}")
	check_eq "sha256: the signed commit is upstream commit-tree -S's, byte for byte" "$tip_git" "$c"
fi
finish
