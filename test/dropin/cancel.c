#include "conf.h"
int
main(void)
{
	conf_begin("cancel");
	return (conf_end());
}
