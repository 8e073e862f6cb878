#include "conf.h"
int
main(void)
{
	conf_begin("cond");
	return (conf_end());
}
