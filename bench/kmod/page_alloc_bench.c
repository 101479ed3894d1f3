// SPDX-License-Identifier: GPL-2.0
/*
 * page_alloc_bench: what the page allocator itself costs, on the stock and
 * the patched kernel alike (make bench, issue 21).
 *
 * The secmem series adds free lists and checks to the page allocator that
 * every allocation passes, whether it wants unmapped memory or not. This
 * module times plain GFP_KERNEL allocations, which never ask for unmapped
 * memory, at order 0 and at pageblock order (9, a THP's worth):
 *
 *   pair    alloc_pages() then __free_pages() at once, @pairs times: the
 *           per-CPU list fast path on both sides;
 *   batch   @batch allocations, then their @batch frees: the per-CPU lists
 *           refill from and drain to the buddy lists under zone->lock.
 *
 * Each figure is nanoseconds per allocation plus its free, the median of
 * @rounds rounds. In a QEMU -icount shift=0 boot a nanosecond of guest time
 * is one instruction, so the same figures count instructions.
 *
 * Loading runs the benchmark and prints one line per figure:
 *
 *   page_alloc_bench: case=FLAVOR.page_alloc figure=orderN_KIND_ns value=V
 *
 * which bench/guest/bench.d/10-kernel turns into make bench's format. The
 * module does nothing else; unload it afterwards.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/gfp.h>
#include <linux/ktime.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/sort.h>

static char *flavor = "unknown";
module_param(flavor, charp, 0444);
MODULE_PARM_DESC(flavor, "kernel flavor named in the output (stock, patched)");

static unsigned int rounds = 7;
module_param(rounds, uint, 0444);
MODULE_PARM_DESC(rounds, "rounds per figure, the median is printed (1-64)");

#define MAX_ROUNDS 64

struct pab_case {
	unsigned int order;
	unsigned int pairs;	/* allocations per round, pair pattern */
	unsigned int batch;	/* allocations held at once, batch pattern */
	unsigned int batches;	/* batches per round */
};

/*
 * Order 0: 16384 pairs; batches of 8192 pages (32 MiB), more than a
 * per-CPU list holds even at its largest (pcp->high_max), so that the
 * buddy lists are reached. Order 9: 1024 pairs, batches of 16 (32 MiB).
 * About 40 ms per round under TCG.
 */
static const struct pab_case pab_cases[] = {
	{ .order = 0, .pairs = 16384, .batch = 8192, .batches = 2 },
	{ .order = 9, .pairs = 1024, .batch = 16, .batches = 16 },
};

static int cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

static u64 median(u64 *v, unsigned int n)
{
	sort(v, n, sizeof(*v), cmp_u64, NULL);
	return v[n / 2];
}

static gfp_t pab_gfp(unsigned int order)
{
	/* A large allocation that cannot be had fails rather than compacts. */
	return GFP_KERNEL | __GFP_NOWARN | (order ? __GFP_NORETRY : 0);
}

/* Nanoseconds per alloc+free, pair pattern; 0 if an allocation failed. */
static u64 pab_pairs(const struct pab_case *c)
{
	unsigned int i;
	u64 start, ns;

	start = ktime_get_ns();
	for (i = 0; i < c->pairs; i++) {
		struct page *page = alloc_pages(pab_gfp(c->order), c->order);

		if (!page)
			return 0;
		__free_pages(page, c->order);
	}
	ns = ktime_get_ns() - start;
	return div_u64(ns, c->pairs) ?: 1;
}

/* Nanoseconds per alloc+free, batch pattern; 0 if an allocation failed. */
static u64 pab_batches(const struct pab_case *c, struct page **held)
{
	unsigned int b, i, n;
	u64 ns = 0;

	for (b = 0; b < c->batches; b++) {
		u64 start = ktime_get_ns();

		for (n = 0; n < c->batch; n++) {
			held[n] = alloc_pages(pab_gfp(c->order), c->order);
			if (!held[n])
				break;
		}
		for (i = 0; i < n; i++)
			__free_pages(held[i], c->order);
		ns += ktime_get_ns() - start;
		if (n < c->batch)
			return 0;
		cond_resched();
	}
	return div_u64(ns, c->batches * c->batch) ?: 1;
}

static void pab_print(unsigned int order, const char *kind, u64 ns)
{
	pr_info("case=%s.page_alloc figure=order%u_%s_ns value=%llu\n", flavor,
		order, kind, ns);
}

static int __init page_alloc_bench_init(void)
{
	static u64 pair_ns[MAX_ROUNDS], batch_ns[MAX_ROUNDS];
	unsigned int i, r, max_batch = 0;
	struct page **held;
	int err = 0;

	if (!rounds || rounds > MAX_ROUNDS) {
		pr_err("rounds=%u: must be 1-%u\n", rounds, MAX_ROUNDS);
		return -EINVAL;
	}
	for (i = 0; i < ARRAY_SIZE(pab_cases); i++)
		max_batch = max(max_batch, pab_cases[i].batch);
	held = kcalloc(max_batch, sizeof(*held), GFP_KERNEL);
	if (!held)
		return -ENOMEM;

	for (i = 0; i < ARRAY_SIZE(pab_cases) && !err; i++) {
		const struct pab_case *c = &pab_cases[i];

		/* One unmeasured round brings the per-CPU lists to steady state. */
		if (!pab_pairs(c) || !pab_batches(c, held)) {
			err = -ENOMEM;
			break;
		}
		for (r = 0; r < rounds; r++) {
			pair_ns[r] = pab_pairs(c);
			batch_ns[r] = pab_batches(c, held);
			if (!pair_ns[r] || !batch_ns[r]) {
				err = -ENOMEM;
				break;
			}
			cond_resched();
		}
		if (err)
			break;
		pab_print(c->order, "pair", median(pair_ns, rounds));
		pab_print(c->order, "batch", median(batch_ns, rounds));
	}
	kfree(held);
	if (err)
		pr_err("an order-%u allocation failed: no figures\n",
		       pab_cases[i].order);
	return err;
}

static void __exit page_alloc_bench_exit(void)
{
}

module_init(page_alloc_bench_init);
module_exit(page_alloc_bench_exit);
MODULE_DESCRIPTION("secmem make bench: cost of page allocations and frees");
MODULE_LICENSE("GPL");
