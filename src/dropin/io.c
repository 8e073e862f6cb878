#include "dropin.h"
