/* Links the unit tests on a tree without sim/tensor.c (see tests/fuzz/tensor_fallback.h). */
#include "tests/fuzz/tensor_fallback.h"
