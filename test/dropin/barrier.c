#include "conf.h"
int
main(void)
{
	conf_begin("barrier");
	return (conf_end());
}
