#include "conf.h"
int
main(void)
{
	conf_begin("attr");
	return (conf_end());
}
