/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Host load for micro's loaded mode: one process per CPU that spins, so
 * every worker shares its CPU with a thread the host schedules against
 * it, as on a machine that runs something else beside the program.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "load.h"

#define MAXHOGS 1024

static pid_t hogs[MAXHOGS];
static int nhogs;

static void
spin_forever(void)
{
	volatile unsigned long x = 0;

	/* Gone with the parent, however it ends. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() == 1)
		_exit(0);
	for (;;)
		x++;
}

int
bw_load_start(int n)
{
	if (n > MAXHOGS)
		n = MAXHOGS;
	for (; nhogs < n; nhogs++) {
		pid_t p = fork();

		if (p < 0) {
			bw_load_stop();
			return (-1);
		}
		if (p == 0)
			spin_forever();
		hogs[nhogs] = p;
	}
	return (0);
}

void
bw_load_stop(void)
{
	for (int i = 0; i < nhogs; i++)
		kill(hogs[i], SIGKILL);
	for (int i = 0; i < nhogs; i++)
		waitpid(hogs[i], NULL, 0);
	nhogs = 0;
}

static void
on_term(int sig)
{
	(void)sig;
	bw_load_stop();
	_exit(0);
}

int
bw_load_only(int n)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_term;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	if (bw_load_start(n) != 0) {
		perror("micro: fork");
		return (1);
	}
	for (;;)
		pause();
}
