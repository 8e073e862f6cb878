#include "conf.h"
int
main(void)
{
	conf_begin("key");
	return (conf_end());
}
