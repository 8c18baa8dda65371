// LD_PRELOAD shim: times CUPTI profiler calls of a program (the CUPTI
// samples) and prints each call and a summary to stderr: wall time, the
// calling thread's user and system CPU time (getrusage RUSAGE_THREAD), and
// its voluntary context switches (a call that waits rather than works).
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

typedef int (*fn_t)(void *);
static const char *names[] = {
    "cuptiRangeProfilerEnable", "cuptiRangeProfilerDisable", "cuptiRangeProfilerSetConfig",
    "cuptiRangeProfilerStart", "cuptiRangeProfilerStop", "cuptiRangeProfilerDecodeData",
    "cuptiRangeProfilerPushRange", "cuptiRangeProfilerPopRange",
    "cuptiProfilerBeginSession", "cuptiProfilerEndSession", "cuptiProfilerSetConfig",
    "cuptiProfilerUnsetConfig", "cuptiProfilerBeginPass", "cuptiProfilerEndPass",
    "cuptiProfilerEnableProfiling", "cuptiProfilerDisableProfiling", "cuptiProfilerFlushCounterData",
    "cuptiProfilerPushRange", "cuptiProfilerPopRange", "cuptiProfilerHostEvaluateToGpuValues",
    "cuptiProfilerHostGetNumOfPasses", "cuptiProfilerHostGetConfigImage",
};
#define N (sizeof names / sizeof names[0])
static fn_t real[N];
static double total[N], maxv[N], usr[N], sys[N];
static long waits[N];
static long count[N];

static double now(void) {
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static double tv(struct timeval t) { return t.tv_sec * 1e3 + t.tv_usec / 1e3; }

static int wrap(int i, void *p) {
	if (!real[i]) real[i] = (fn_t)dlsym(RTLD_NEXT, names[i]);
	struct rusage r0, r1;
	getrusage(RUSAGE_THREAD, &r0);
	double t0 = now();
	int r = real[i](p);
	double ms = now() - t0;
	getrusage(RUSAGE_THREAD, &r1);
	double u = tv(r1.ru_utime) - tv(r0.ru_utime), s = tv(r1.ru_stime) - tv(r0.ru_stime);
	long w = r1.ru_nvcsw - r0.ru_nvcsw;
	total[i] += ms;
	usr[i] += u;
	sys[i] += s;
	waits[i] += w;
	count[i]++;
	if (ms > maxv[i]) maxv[i] = ms;
	fprintf(stderr, "[cupti-time] %s %.3f ms (user %.3f, sys %.3f, %ld waits) rc=%d\n", names[i], ms, u, s, w, r);
	return r;
}

__attribute__((destructor)) static void summary(void) {
	for (unsigned i = 0; i < N; i++)
		if (count[i])
			fprintf(stderr, "[cupti-sum] %-40s %4ld calls, avg %8.3f ms, max %8.3f ms, user %8.3f, sys %8.3f ms, %ld waits\n",
			        names[i], count[i], total[i] / count[i], maxv[i], usr[i], sys[i], waits[i]);
}

#define W(i, name) int name(void *p) { return wrap(i, p); }
W(0, cuptiRangeProfilerEnable) W(1, cuptiRangeProfilerDisable) W(2, cuptiRangeProfilerSetConfig)
W(3, cuptiRangeProfilerStart) W(4, cuptiRangeProfilerStop) W(5, cuptiRangeProfilerDecodeData)
W(6, cuptiRangeProfilerPushRange) W(7, cuptiRangeProfilerPopRange)
W(8, cuptiProfilerBeginSession) W(9, cuptiProfilerEndSession) W(10, cuptiProfilerSetConfig)
W(11, cuptiProfilerUnsetConfig) W(12, cuptiProfilerBeginPass) W(13, cuptiProfilerEndPass)
W(14, cuptiProfilerEnableProfiling) W(15, cuptiProfilerDisableProfiling) W(16, cuptiProfilerFlushCounterData)
W(17, cuptiProfilerPushRange) W(18, cuptiProfilerPopRange) W(19, cuptiProfilerHostEvaluateToGpuValues)
W(20, cuptiProfilerHostGetNumOfPasses) W(21, cuptiProfilerHostGetConfigImage)
