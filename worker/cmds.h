/*
 * The replayq program's subcommands. Each returns the process exit status.
 */
#ifndef RQ_CMDS_H
#define RQ_CMDS_H

int cmd_replay(int argc, char **argv);

#endif
