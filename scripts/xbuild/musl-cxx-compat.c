/* Two libstdc++ functions that Bun's musl builds import and that the musl
 * libstdc++ used to run them here (from a musllinux_1_1 wheel, GCC 10) predates:
 * std::__throw_bad_array_new_length() (GCC 11) and std::__glibcxx_assert_fail
 * (GCC 13). Both only ever run on a path that ends the process (a failed
 * allocation size check, a failed library assertion), so here they abort.
 * Loaded with LD_PRELOAD by scripts/xbuild/runtimes.js; never shipped. */
#include <stdlib.h>

void _ZSt28__throw_bad_array_new_lengthv(void) { abort(); }

void _ZSt21__glibcxx_assert_failPKciS0_S0_(const char *file, int line, const char *function,
                                           const char *condition) {
  (void)file;
  (void)line;
  (void)function;
  (void)condition;
  abort();
}
