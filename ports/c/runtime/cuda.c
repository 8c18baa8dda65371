/* placeholder: replaced below */
#include "rt.h"
#include <stdio.h>
void *rt_cuda_backend_new(size_t nagents, char *err, size_t errlen) { (void)nagents; snprintf(err, errlen, "not built"); return NULL; }
const rt_backend rt_cuda_backend = {.name = "cuda"};
