#include "conf.h"
int
main(void)
{
	conf_begin("rwlock");
	return (conf_end());
}
