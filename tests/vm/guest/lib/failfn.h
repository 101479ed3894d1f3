/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fail_function (CONFIG_FAIL_FUNCTION): make every call of one function
 * the kernel allows error injection into (ALLOW_ERROR_INJECTION) fail,
 * for the guest tests of how the series copes with each failure.
 */
#ifndef SECMEM_TEST_FAILFN_H
#define SECMEM_TEST_FAILFN_H

#define FAILFN_DIR	"/sys/kernel/debug/fail_function"

/*
 * Fail every call of @func, returning @retval ("0" for a NULL pointer,
 * "0xfffffffffffffff4" for -ENOMEM as a 64-bit register), in every task:
 * the task filter is no use here, as fail_function's kprobe runs in
 * int3's NMI-like context on x86, where no task ever matches. Returns 0,
 * or -1 with a diagnostic (tap_diag) naming the file that refused.
 */
int failfn_inject(const char *func, const char *retval);

/* Stop failing anything; quiet, safe to call when nothing was injected. */
void failfn_stop(void);

#endif /* SECMEM_TEST_FAILFN_H */
