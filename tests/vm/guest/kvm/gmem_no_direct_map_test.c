// SPDX-License-Identifier: GPL-2.0
/*
 * A KVM guest whose private memory is a guest_memfd created with
 * GUEST_MEMFD_FLAG_NO_DIRECT_MAP, run for real: the test VM runs under TCG
 * with -cpu max, which offers SVM with nested paging, so this guest is a
 * nested one. Built with the kernel's KVM selftest library.
 *
 * The guest faults in every page of 16 MiB of private memory, then writes a
 * random 32-byte secret into it, then the same secret into an ordinary
 * (shared) memslot, halting (a ucall) after each step. The host checks:
 *
 *   flags        KVM_CAP_GUEST_MEMFD_FLAGS offers NO_DIRECT_MAP for the
 *                system and a software-protected VM, nothing for a default VM
 *   cold         with the unmapped pool emptied, one TLB shootdown per
 *                pageblock converted for the guest, and no direct-map split
 *                (DirectMap4k does not grow)
 *   warm         with the pool filled, no conversion and no shootdown at all,
 *                every page from the pool, DirectMap4k unchanged
 *   kcore        a root scan of all of RAM through /proc/kcore does not find
 *                the secret while it is only in private memory; once the
 *                guest has also written it to the shared memslot it is
 *                found, and exactly at that page's physical address
 *   hibernation  refused while the file exists, offered again after
 *   punch        a hole punched while the VM lives: the guest then reads a
 *                fresh zeroed page, not the secret
 *   enomem       with secretmem_alloc_folio() failing (fail_function), the
 *                vCPU's fault ends KVM_RUN with ENOMEM and a
 *                KVM_EXIT_MEMORY_FAULT for the private page; without the
 *                failure, the same vCPU then runs on
 *   teardown     after the VM and the file are gone, the pool holds as many
 *                free bytes as before the VM was made
 *
 * Shootdowns are nr_tlb_remote_flush plus nr_tlb_kernel_flush, the
 * kernel-range flushes the series counts (CONFIG_DEBUG_TLBFLUSH). Something else in the system may
 * flush while a step is measured (a vfree() purge), so a step that counts
 * more than expected is tried again: one of three tries must be exact, and
 * none may count fewer.
 *
 * The test keeps the secret only bit-inverted in its own memory, and hands
 * it to the guest that way (in the shared slot); the guest un-inverts it a
 * word at a time, and the scan un-inverts its needle a byte at a time.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "kvm_util.h"
#include "processor.h"
#include "test_util.h"
#include "ucall_common.h"

#include "failfn.h"
#include "kcore.h"
#include "procfs.h"
#include "tap.h"
#include "upool.h"

#ifndef GUEST_MEMFD_FLAG_NO_DIRECT_MAP
#define GUEST_MEMFD_FLAG_NO_DIRECT_MAP	(1ULL << 2)
#endif
#ifndef KVM_CAP_GUEST_MEMFD_FLAGS
#define KVM_CAP_GUEST_MEMFD_FLAGS	244
#endif

#define GMEM_SLOT	10
#define CTL_SLOT	11
#define GMEM_GPA	0x40000000ULL
#define GMEM_BYTES	(16ULL << 20)
#define GMEM_PAGES	(GMEM_BYTES / PAGE_SIZE)
#define CTL_GPA		0x50000000ULL
#define CTL_PAGES	2ULL
/* The inverted secret, for the guest: the second page of the shared slot. */
#define INV_GPA		(CTL_GPA + PAGE_SIZE)
#define SECRET_WORDS	4
#define SECRET_BYTES	(SECRET_WORDS * 8)
/* Where each page's own word goes, clear of the secret at offset 0. */
#define TOUCH_WORD	8

#define TRIES		3
/* How long the pool may take to get a torn-down VM's pages back. */
#define TEARDOWN_WAIT_S	30.0

static void guest_code(void)
{
	volatile uint64_t *priv = (volatile uint64_t *)GMEM_GPA;
	volatile uint64_t *ctl = (volatile uint64_t *)CTL_GPA;
	volatile uint64_t *inv = (volatile uint64_t *)INV_GPA;
	uint64_t i;

	/* 1: fault in every private page. */
	for (i = 0; i < GMEM_PAGES; i++)
		priv[i * (PAGE_SIZE / 8) + TOUCH_WORD] = i + 1;
	GUEST_SYNC(1);
	for (i = 0; i < GMEM_PAGES; i++)
		GUEST_ASSERT_EQ(priv[i * (PAGE_SIZE / 8) + TOUCH_WORD], i + 1);

	/* 2: the secret, into private memory only. */
	for (i = 0; i < SECRET_WORDS; i++)
		priv[i] = ~inv[i];
	GUEST_SYNC(2);

	/* 3: the same secret into the shared slot: the control. */
	for (i = 0; i < SECRET_WORDS; i++)
		ctl[i] = ~inv[i];
	GUEST_SYNC(3);

	/* 4: the host punched the first private page: a new, zeroed one. */
	for (i = 0; i < PAGE_SIZE / 8; i++)
		GUEST_ASSERT_EQ(priv[i], 0);
	GUEST_DONE();
}

struct vm_ctx {
	struct kvm_vm *vm;
	struct kvm_vcpu *vcpu;
	int gmem_fd;
};

static void vm_ctx_create(struct vm_ctx *c, const unsigned char *inv)
{
	const struct vm_shape shape = {
		.mode = VM_MODE_DEFAULT,
		.type = KVM_X86_SW_PROTECTED_VM,
	};

	c->vm = __vm_create_shape_with_one_vcpu(shape, &c->vcpu, 0, guest_code);
	c->gmem_fd = vm_create_guest_memfd(c->vm, GMEM_BYTES,
					   GUEST_MEMFD_FLAG_NO_DIRECT_MAP);
	vm_mem_add(c->vm, VM_MEM_SRC_ANONYMOUS, GMEM_GPA, GMEM_SLOT, GMEM_PAGES,
		   KVM_MEM_GUEST_MEMFD, c->gmem_fd, 0);
	vm_userspace_mem_region_add(c->vm, VM_MEM_SRC_ANONYMOUS, CTL_GPA,
				    CTL_SLOT, CTL_PAGES, 0);
	virt_map(c->vm, GMEM_GPA, GMEM_GPA, GMEM_PAGES);
	virt_map(c->vm, CTL_GPA, CTL_GPA, CTL_PAGES);
	vm_mem_set_private(c->vm, GMEM_GPA, GMEM_BYTES);
	memcpy(addr_gpa2hva(c->vm, INV_GPA), inv, SECRET_BYTES);
}

static void vm_ctx_destroy(struct vm_ctx *c)
{
	kvm_vm_free(c->vm);
	close(c->gmem_fd);
}

/* Run the vCPU to its next ucall, which must be SYNC @stage (or DONE). */
static void run_to(struct vm_ctx *c, uint64_t stage)
{
	struct ucall uc;

	vcpu_run(c->vcpu);
	TEST_ASSERT_KVM_EXIT_REASON(c->vcpu, KVM_EXIT_IO);
	switch (get_ucall(c->vcpu, &uc)) {
	case UCALL_SYNC:
		TEST_ASSERT(uc.args[1] == stage, "guest at stage %lu, not %lu",
			    uc.args[1], stage);
		break;
	case UCALL_DONE:
		TEST_ASSERT(!stage, "guest done, expected stage %lu", stage);
		break;
	case UCALL_ABORT:
		REPORT_GUEST_ASSERT(uc);
		break;
	default:
		TEST_FAIL("unexpected ucall %lu", uc.cmd);
	}
}

struct counters {
	long long flushes;	/* nr_tlb_remote_flush + nr_tlb_kernel_flush */
	long long conversions;	/* unmapped_block_unmap */
	long long from_pool;	/* unmapped_alloc_pool */
	long long failed;	/* unmapped_alloc_fail */
	long long dm4k;		/* DirectMap4k, bytes */
};

static void read_counters(struct counters *c)
{
	c->flushes = upool_vmstat("nr_tlb_remote_flush") +
		     upool_vmstat("nr_tlb_kernel_flush");
	c->conversions = upool_vmstat("unmapped_block_unmap");
	c->from_pool = upool_vmstat("unmapped_alloc_pool");
	c->failed = upool_vmstat("unmapped_alloc_fail");
	c->dm4k = upool_meminfo("DirectMap4k");
}

static void diff_counters(struct counters *d, const struct counters *a,
			  const struct counters *b)
{
	d->flushes = b->flushes - a->flushes;
	d->conversions = b->conversions - a->conversions;
	d->from_pool = b->from_pool - a->from_pool;
	d->failed = b->failed - a->failed;
	d->dm4k = b->dm4k - a->dm4k;
}

/* A fresh VM, faulted in while the counters watch. */
static void measure_fault_in(const unsigned char *inv, struct counters *d)
{
	struct counters a, b;
	struct vm_ctx c;

	vm_ctx_create(&c, inv);
	read_counters(&a);
	run_to(&c, 1);
	read_counters(&b);
	vm_ctx_destroy(&c);
	diff_counters(d, &a, &b);
	tap_diag("  %llu pages: %lld conversions, %lld shootdowns, %lld from the pool, %lld failed, DirectMap4k %+lld kB",
		 GMEM_PAGES, d->conversions, d->flushes, d->from_pool, d->failed,
		 d->dm4k / 1024);
}

static bool hibernation_offered(void)
{
	char buf[256];
	int fd = open("/sys/power/state", O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	return strstr(buf, "disk");
}

/* The physical address behind @hva, from /proc/self/pagemap. */
static uint64_t hva_to_phys(const void *hva)
{
	uint64_t entry = 0, va = (uint64_t)(uintptr_t)hva;
	int fd = open("/proc/self/pagemap", O_RDONLY);

	if (fd < 0)
		return 0;
	if (pread(fd, &entry, sizeof(entry), va / PAGE_SIZE * 8) != sizeof(entry))
		entry = 0;
	close(fd);
	if (!(entry & (1ULL << 63)))
		return 0;
	return (entry & ((1ULL << 55) - 1)) * PAGE_SIZE + va % PAGE_SIZE;
}

static void test_flags(void)
{
	const uint64_t nodm = GUEST_MEMFD_FLAG_NO_DIRECT_MAP;
	uint64_t sys, sw, def;
	struct kvm_vm *vm;

	sys = kvm_check_cap(KVM_CAP_GUEST_MEMFD_FLAGS);
	vm = vm_create_barebones_type(KVM_X86_SW_PROTECTED_VM);
	sw = vm_check_cap(vm, KVM_CAP_GUEST_MEMFD_FLAGS);
	kvm_vm_free(vm);
	vm = vm_create_barebones();
	def = vm_check_cap(vm, KVM_CAP_GUEST_MEMFD_FLAGS);
	kvm_vm_free(vm);
	tap_diag("KVM_CAP_GUEST_MEMFD_FLAGS: system 0x%lx, software-protected VM 0x%lx, default VM 0x%lx",
		 sys, sw, def);
	tap_report(sys == nodm && sw == nodm && def == 0 ? TAP_PASS : TAP_FAIL,
		   "flags_cap", NULL);
}

/*
 * A conversion purges lazily freed vmalloc areas before it changes the
 * direct map, and that purge is a kernel-wide flush of its own: the VMs of
 * the earlier cases leave such areas. Convert one pageblock outside the
 * count (the pool worker fills node 0 by one block), so that the counted
 * conversions find none left over from before.
 */
static void purge_lazy_vmalloc(void)
{
	int node = upool.node[0].id;
	u64_t last;

	if (upool_reset() || upool_wait_empty(60) ||
	    upool_knob_set(node, UPOOL_TARGET, upool.pageblock) ||
	    upool_wait_free(node, upool.pageblock, UINT64_MAX, 30, &last))
		tap_bail("cannot convert a pageblock ahead of the cold case");
}

static void test_cold(const unsigned char *inv)
{
	bool exact = false, fewer = false, dm_grew = false, none = true;
	struct counters d;
	int i;

	for (i = 0; i < TRIES && !exact; i++) {
		purge_lazy_vmalloc();
		if (upool_reset() || upool_wait_empty(60) || upool_settle(300, 30))
			tap_bail("cannot empty the unmapped pool");
		tap_diag("cold, try %d:", i + 1);
		measure_fault_in(inv, &d);
		exact = d.conversions > 0 && d.flushes == d.conversions;
		fewer |= d.flushes < d.conversions;
		dm_grew |= d.dm4k > 0;
		none &= !d.conversions;
	}
	tap_report(exact && !fewer && !none ? TAP_PASS : TAP_FAIL,
		   "cold_one_shootdown_per_converted_pageblock", NULL);
	tap_report(!dm_grew ? TAP_PASS : TAP_FAIL, "cold_directmap4k_unchanged",
		   NULL);
}

/*
 * Fill every node's pool with twice what the guest needs (whichever node
 * the vCPU's faults come from), then keep it: target 0 (no refill),
 * watermark_high above it (no release).
 */
static void fill_pool(void)
{
	u64_t got = 0;
	int i, id;

	for (i = 0; i < upool.nr_nodes; i++) {
		id = upool.node[i].id;
		if (upool_set(id, 2 * GMEM_BYTES, 0, 4 * GMEM_BYTES) ||
		    upool_wait_free(id, 2 * GMEM_BYTES, UINT64_MAX, 120, &got))
			tap_bail("cannot fill node%d's unmapped pool (free %llu)",
				 id, got);
	}
	for (i = 0; i < upool.nr_nodes; i++)
		if (upool_knob_set(upool.node[i].id, UPOOL_TARGET, 0))
			tap_bail("cannot hold the unmapped pool");
	if (upool_settle(300, 30))
		tap_bail("the unmapped pool does not settle");
}

/* Free bytes in the pools of all nodes. */
static u64_t pool_free_bytes(void)
{
	u64_t sum = 0, v;
	int i;

	for (i = 0; i < upool.nr_nodes; i++) {
		if (upool_stat(upool.node[i].id, UPOOL_FREE_BYTES, &v))
			tap_bail("cannot read node%d's free bytes", upool.node[i].id);
		sum += v;
	}
	return sum;
}

static void test_warm(const unsigned char *inv)
{
	bool clean = false, dm_grew = false;
	struct counters d;
	int i;

	for (i = 0; i < TRIES && !clean; i++) {
		fill_pool();
		tap_diag("warm, try %d:", i + 1);
		measure_fault_in(inv, &d);
		clean = !d.conversions && !d.flushes && !d.failed &&
			d.from_pool >= (long long)GMEM_PAGES;
		dm_grew |= d.dm4k > 0;
	}
	tap_report(clean ? TAP_PASS : TAP_FAIL,
		   "warm_no_conversion_no_shootdown", NULL);
	tap_report(!dm_grew ? TAP_PASS : TAP_FAIL, "warm_directmap4k_unchanged",
		   NULL);
}

static void test_secret(const unsigned char *inv)
{
	struct kcore_needle needle = {
		.bytes = inv, .len = SECRET_BYTES, .xor = 0xff,
	};
	struct kvm_run *run;
	bool offered_before, offered_during, memfault;
	u64_t free_before, free_after;
	double t0;
	uint64_t ctl_phys, scanned;
	struct kcore kc;
	struct vm_ctx c;
	int err, r, i;

	err = kcore_open(&kc);
	if (err)
		tap_bail("/proc/kcore: %s", strerror(-err));

	fill_pool();
	offered_before = hibernation_offered();
	free_before = pool_free_bytes();

	vm_ctx_create(&c, inv);
	offered_during = hibernation_offered();
	run_to(&c, 1);
	run_to(&c, 2);

	err = kcore_find_all(&kc, &needle, 1, &scanned);
	tap_diag("secret in private memory only: %s in %llu MiB of /proc/kcore",
		 needle.found ? "found" : "not found",
		 (unsigned long long)(scanned >> 20));
	tap_report(err == 0 && !needle.found ? TAP_PASS : TAP_FAIL,
		   "kcore_private_secret_absent", NULL);

	run_to(&c, 3);
	ctl_phys = hva_to_phys(addr_gpa2hva(c.vm, CTL_GPA));
	err = kcore_find_all(&kc, &needle, 1, &scanned);
	tap_diag("secret also in the shared slot (page at 0x%lx): %s at 0x%lx",
		 ctl_phys, needle.found ? "found" : "not found", needle.paddr);
	tap_report(err == 1 && needle.found && ctl_phys &&
			   needle.paddr == ctl_phys ? TAP_PASS : TAP_FAIL,
		   "kcore_shared_control_found_there_only", NULL);

	tap_diag("hibernation offered: before %s, with the file %s",
		 offered_before ? "yes" : "no", offered_during ? "yes" : "no");
	tap_report(offered_before && !offered_during ? TAP_PASS : TAP_FAIL,
		   "hibernation_refused_while_open", NULL);

	/* Punch the secret's page out while the VM lives, then fail its refill. */
	r = fallocate(c.gmem_fd, FALLOC_FL_KEEP_SIZE | FALLOC_FL_PUNCH_HOLE, 0,
		      PAGE_SIZE);
	TEST_ASSERT(!r, "punch hole: %s", strerror(errno));
	if (failfn_inject("secretmem_alloc_folio", "0"))
		tap_bail("cannot inject failures into secretmem_alloc_folio");
	r = __vcpu_run(c.vcpu);
	err = errno;
	failfn_stop();
	run = c.vcpu->run;
	memfault = r == -1 && err == ENOMEM &&
		   run->exit_reason == KVM_EXIT_MEMORY_FAULT &&
		   run->memory_fault.gpa == GMEM_GPA &&
		   run->memory_fault.size == PAGE_SIZE &&
		   (run->memory_fault.flags & KVM_MEMORY_EXIT_FLAG_PRIVATE);
	tap_diag("KVM_RUN with no page to be had: %d (%s), exit reason %u, gpa 0x%llx size %llu flags 0x%llx",
		 r, strerror(err), run->exit_reason,
		 (unsigned long long)run->memory_fault.gpa,
		 (unsigned long long)run->memory_fault.size,
		 (unsigned long long)run->memory_fault.flags);
	tap_report(memfault ? TAP_PASS : TAP_FAIL,
		   "alloc_failure_memory_fault_exit", NULL);

	/*
	 * The same vCPU goes on: its page is new and reads as zeroes (the
	 * guest asserts it; run_to() fails the test otherwise). Without the
	 * failure above the guest is already done, and would run off its end.
	 */
	if (memfault) {
		run_to(&c, 0);
		tap_report(TAP_PASS, "punch_hole_gives_zeroed_page", NULL);
	} else {
		tap_report(TAP_FAIL, "punch_hole_gives_zeroed_page",
			   "not checked: the guest was not stopped at the page");
	}

	vm_ctx_destroy(&c);
	kcore_close(&kc);

	if (upool_settle(300, 30))
		tap_bail("the unmapped pool does not settle");
	/*
	 * The VM's last references can go after the pool has been quiet for
	 * a while (a deferred fput, an RCU callback), later the busier the
	 * host, and a CPU's LRU batch keeps the references to the folios it
	 * holds until something drains it, which an idle CPU may never do:
	 * drain every CPU's batch each second (drop_caches 1 does), wait for
	 * the pages up to TEARDOWN_WAIT_S, and say how long it took. A page
	 * that never comes back still fails.
	 */
	t0 = upool_now();
	for (i = 0; (free_after = pool_free_bytes()) != free_before &&
		    upool_now() - t0 < TEARDOWN_WAIT_S; i++) {
		if (!(i % 10))
			upool_write_str("/proc/sys/vm/drop_caches", "1");
		upool_sleep_ms(100);
	}
	tap_diag("pool free bytes: %llu before the VM, %llu after its teardown (%.1f s after the pool settled)",
		 free_before, free_after, upool_now() - t0);
	tap_report(free_after == free_before ? TAP_PASS : TAP_FAIL,
		   "teardown_returns_every_page_to_the_pool", NULL);
	tap_report(hibernation_offered() ? TAP_PASS : TAP_FAIL,
		   "hibernation_offered_after_close", NULL);
}

int main(void)
{
	unsigned char inv[SECRET_BYTES];
	unsigned int i;

	if (!kvm_has_cap(KVM_CAP_GUEST_MEMFD) ||
	    !(kvm_check_cap(KVM_CAP_VM_TYPES) & BIT(KVM_X86_SW_PROTECTED_VM)))
		tap_skip_all("no guest_memfd or no software-protected VM type");
	if (!(kvm_check_cap(KVM_CAP_GUEST_MEMFD_FLAGS) &
	      GUEST_MEMFD_FLAG_NO_DIRECT_MAP))
		tap_skip_all("guest_memfd has no NO_DIRECT_MAP flag here");
	upool_init_or_skip(false);
	upool_install_restore();

	/* The secret exists in this process only inverted. */
	if (getrandom(inv, sizeof(inv), 0) != sizeof(inv))
		tap_bail("getrandom: %s", strerror(errno));
	for (i = 0; i < sizeof(inv); i++)
		inv[i] = ~inv[i];

	tap_plan(12);
	test_flags();
	test_cold(inv);
	test_warm(inv);
	test_secret(inv);
	return tap_finish();
}
