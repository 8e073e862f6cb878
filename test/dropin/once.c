#include "conf.h"
int
main(void)
{
	conf_begin("once");
	return (conf_end());
}
