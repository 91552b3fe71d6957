#include "CStrobeCategories.h"

uint64_t _Atomic cstrobe_category_generations[CSTROBE_CATEGORY_LIMIT];
