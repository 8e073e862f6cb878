#include "conf.h"
int
main(void)
{
	conf_begin("sem");
	return (conf_end());
}
