#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "dropin.h"

int ult__dropin_ready;

void
ult__dropin_fatal(const char *what, const char *why)
{
	fprintf(stderr, "ult-run: %s: %s\n", what, why);
	_exit(127);
}
