#include "sim/kernel/tl.h" /* a kernel the trace srcsites.json names lines of */
__attribute__((unused)) static void mykern(struct tl *tl, const struct kargs *a) {
    struct tl_tensor *x = tl_load(tl, tl_arg(tl, a, 0));
	struct tl_tensor *y = tl_dot(tl, x, x);
    tl_store(tl, tl_arg(tl, a, 1), y);
}
