/*
 * A stand-in for the NVIDIA driver's libnvidia-ml.so.1, for tests: the
 * NVML entry points slurm-lite's daemon calls (through go-nvml, which
 * dlopens the library and binds the symbols at their first call), answered
 * from a state file the test writes and may change at any time. Built by
 * the tests with gcc (package nvmlstub); never installed.
 *
 * Environment:
 *   NVML_STUB_STATE  the state file (below). Unset or unreadable:
 *                    nvmlInit fails with NVML_ERROR_DRIVER_NOT_LOADED, as
 *                    a library without its kernel module does.
 *   NVML_STUB_CALLS  when set, a file each entry point's name is appended
 *                    to the first time this process calls it: which of
 *                    the versioned symbols go-nvml chose.
 *
 * The state file is read again at every call. One item a line, fields
 * separated by spaces, '#' starts a comment line:
 *
 *   init ok | driver_not_loaded | mismatch | no_permission
 *                    what nvmlInit answers (default ok)
 *   driver VERSION   nvmlSystemGetDriverVersion
 *   gpu UUID BUSID TOTAL RESERVED UTIL NAME...
 *                    one GPU, in NVML index order. TOTAL and RESERVED
 *                    (what the driver itself holds) are sizes: bytes, or a
 *                    number with K, M or G (binary). UTIL is the GPU's
 *                    utilization in percent, or "nosupport" for a GPU
 *                    whose driver answers NVML_ERROR_NOT_SUPPORTED.
 *                    Memory used is RESERVED plus the processes' memory.
 *   proc UUID PID MEM
 *                    a compute process on a GPU; listed only while the
 *                    process lives (a dead process holds no memory).
 *   xid UUID N       an Xid event, delivered once, in file order, to an
 *                    event set the GPU registered Xid events with.
 *   lost UUID        the GPU fell off the bus: its handle and UUID still
 *                    answer, every other call NVML_ERROR_GPU_IS_LOST.
 *   nvlink UUID UUID the two GPUs reach each other over NVLink.
 *
 * A GPU whose gpu line is removed is gone: the count drops, and calls on
 * its old handle answer NVML_ERROR_GPU_IS_LOST.
 *
 * Symbol sets: built with -DNVML_STUB_API=3 (the default) the library has
 * what a current driver has: the _v3, _v2 and unversioned symbols. With
 * -DNVML_STUB_API=2 it is an older driver's, with no _v3 symbol: go-nvml
 * must fall back to nvmlDeviceGetPciInfo_v2 and
 * nvmlDeviceGetComputeRunningProcesses_v2, and calling a _v3 symbol would
 * end the process with "undefined symbol".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef NVML_STUB_API
#define NVML_STUB_API 3
#endif

#define API __attribute__((visibility("default")))

/* nvmlReturn_t values, as in nvml.h. */
enum {
	NVML_SUCCESS = 0,
	NVML_ERROR_UNINITIALIZED = 1,
	NVML_ERROR_INVALID_ARGUMENT = 2,
	NVML_ERROR_NOT_SUPPORTED = 3,
	NVML_ERROR_NO_PERMISSION = 4,
	NVML_ERROR_NOT_FOUND = 6,
	NVML_ERROR_INSUFFICIENT_SIZE = 7,
	NVML_ERROR_DRIVER_NOT_LOADED = 9,
	NVML_ERROR_TIMEOUT = 10,
	NVML_ERROR_GPU_IS_LOST = 15,
	NVML_ERROR_LIB_RM_VERSION_MISMATCH = 18,
	NVML_ERROR_UNKNOWN = 999,
};

#define XID_CRITICAL_ERROR 0x8ULL /* nvmlEventTypeXidCriticalError */
#define P2P_CAPS_INDEX_NVLINK 2
#define P2P_STATUS_OK 0
#define P2P_STATUS_NOT_SUPPORTED 5

/* The structures slurm-lite's calls fill, laid out as in nvml.h. */
typedef struct {
	char busIdLegacy[16];
	unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
	char busId[32];
} nvmlPciInfo_t;

typedef struct {
	unsigned long long total, free, used;
} nvmlMemory_t;

typedef struct {
	unsigned int gpu, memory;
} nvmlUtilization_t;

typedef struct { /* nvmlProcessInfo_v2_t, and nvmlProcessInfo_t (_v3) */
	unsigned int pid;
	unsigned long long usedGpuMemory;
	unsigned int gpuInstanceId, computeInstanceId;
} nvmlProcessInfo_t;

typedef struct stubDevice *nvmlDevice_t;
typedef struct stubEventSet *nvmlEventSet_t;

typedef struct {
	nvmlDevice_t device;
	unsigned long long eventType, eventData;
	unsigned int gpuInstanceId, computeInstanceId;
} nvmlEventData_t;

/* A handle is one slot per UUID ever seen, never freed: handles stay
 * valid, as the driver's do, and name the GPU they were given for. */
#define MAX_GPUS 64
struct stubDevice {
	char uuid[96];
	unsigned long long events; /* event types registered */
	nvmlEventSet_t set;
};
static struct stubDevice slots[MAX_GPUS];
static int nslots;

struct stubEventSet {
	int delivered; /* xid lines handed out so far */
};
static struct stubEventSet sets[8];
static int nsets;

/* The state, as last read. */
#define MAX_LINES 256
struct gpuState {
	char uuid[96], busid[32], name[96];
	unsigned long long total, reserved;
	int util; /* -1: not supported */
	int lost;
};
struct procState {
	char uuid[96];
	unsigned int pid;
	unsigned long long mem;
};
struct xidState {
	char uuid[96];
	unsigned long long xid;
};
static struct {
	int init; /* an nvmlReturn_t */
	char driver[80];
	struct gpuState gpus[MAX_GPUS];
	int ngpus;
	struct procState procs[MAX_LINES];
	int nprocs;
	struct xidState xids[MAX_LINES];
	int nxids;
	char nvlink[MAX_LINES][2][96];
	int nnvlink;
} st;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int initialized;

/* note appends name to NVML_STUB_CALLS the first time it is called. */
#define MAX_NOTES 64
static const char *noted[MAX_NOTES];
static int nnoted;
static void note(const char *name)
{
	const char *path = getenv("NVML_STUB_CALLS");
	if (path == NULL || *path == 0)
		return;
	for (int i = 0; i < nnoted; i++)
		if (noted[i] == name)
			return;
	if (nnoted < MAX_NOTES)
		noted[nnoted++] = name;
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT, 0644);
	if (fd < 0)
		return;
	char line[128];
	int n = snprintf(line, sizeof line, "%s\n", name);
	if (write(fd, line, (size_t)n) < 0) {
		/* nothing to do: the log is best effort */
	}
	close(fd);
}

static unsigned long long size(const char *s)
{
	char *end;
	unsigned long long n = strtoull(s, &end, 10);
	switch (*end) {
	case 'K': return n << 10;
	case 'M': return n << 20;
	case 'G': return n << 30;
	}
	return n;
}

static void copy(char *dst, size_t cap, const char *src)
{
	snprintf(dst, cap, "%s", src ? src : "");
}

/* load reads the state file; false when there is none. */
static int load(void)
{
	const char *path = getenv("NVML_STUB_STATE");
	memset(&st, 0, sizeof st);
	FILE *f = path ? fopen(path, "r") : NULL;
	if (f == NULL)
		return 0;
	char line[512];
	while (fgets(line, sizeof line, f)) {
		line[strcspn(line, "\r\n")] = 0;
		char *save, *kind = strtok_r(line, " \t", &save);
		if (kind == NULL || kind[0] == '#')
			continue;
		if (strcmp(kind, "init") == 0) {
			char *v = strtok_r(NULL, " \t", &save);
			if (v == NULL || strcmp(v, "ok") == 0)
				st.init = NVML_SUCCESS;
			else if (strcmp(v, "driver_not_loaded") == 0)
				st.init = NVML_ERROR_DRIVER_NOT_LOADED;
			else if (strcmp(v, "mismatch") == 0)
				st.init = NVML_ERROR_LIB_RM_VERSION_MISMATCH;
			else if (strcmp(v, "no_permission") == 0)
				st.init = NVML_ERROR_NO_PERMISSION;
			else
				st.init = NVML_ERROR_UNKNOWN;
		} else if (strcmp(kind, "driver") == 0) {
			copy(st.driver, sizeof st.driver, strtok_r(NULL, " \t", &save));
		} else if (strcmp(kind, "gpu") == 0 && st.ngpus < MAX_GPUS) {
			struct gpuState *g = &st.gpus[st.ngpus];
			char *uuid = strtok_r(NULL, " \t", &save);
			char *busid = strtok_r(NULL, " \t", &save);
			char *total = strtok_r(NULL, " \t", &save);
			char *reserved = strtok_r(NULL, " \t", &save);
			char *util = strtok_r(NULL, " \t", &save);
			char *name = strtok_r(NULL, "", &save);
			if (name == NULL)
				continue; /* a line cut short: not a GPU */
			copy(g->uuid, sizeof g->uuid, uuid);
			copy(g->busid, sizeof g->busid, busid);
			copy(g->name, sizeof g->name, name);
			g->total = size(total);
			g->reserved = size(reserved);
			g->util = strcmp(util, "nosupport") == 0 ? -1 : atoi(util);
			st.ngpus++;
		} else if (strcmp(kind, "proc") == 0 && st.nprocs < MAX_LINES) {
			struct procState *p = &st.procs[st.nprocs];
			char *uuid = strtok_r(NULL, " \t", &save);
			char *pid = strtok_r(NULL, " \t", &save);
			char *mem = strtok_r(NULL, " \t", &save);
			if (mem == NULL)
				continue;
			copy(p->uuid, sizeof p->uuid, uuid);
			p->pid = (unsigned int)atoi(pid);
			p->mem = size(mem);
			st.nprocs++;
		} else if (strcmp(kind, "xid") == 0 && st.nxids < MAX_LINES) {
			char *uuid = strtok_r(NULL, " \t", &save);
			char *n = strtok_r(NULL, " \t", &save);
			if (n == NULL)
				continue;
			copy(st.xids[st.nxids].uuid, sizeof st.xids[0].uuid, uuid);
			st.xids[st.nxids].xid = strtoull(n, NULL, 10);
			st.nxids++;
		} else if (strcmp(kind, "lost") == 0) {
			char *uuid = strtok_r(NULL, " \t", &save);
			for (int i = 0; uuid && i < st.ngpus; i++)
				if (strcmp(st.gpus[i].uuid, uuid) == 0)
					st.gpus[i].lost = 1;
		} else if (strcmp(kind, "nvlink") == 0 && st.nnvlink < MAX_LINES) {
			char *a = strtok_r(NULL, " \t", &save);
			char *b = strtok_r(NULL, " \t", &save);
			if (b == NULL)
				continue;
			copy(st.nvlink[st.nnvlink][0], 96, a);
			copy(st.nvlink[st.nnvlink][1], 96, b);
			st.nnvlink++;
		}
	}
	fclose(f);
	return 1;
}

/* alive: the process exists and is not a zombie. */
static int alive(unsigned int pid)
{
	if (kill((pid_t)pid, 0) != 0 && errno != EPERM)
		return 0;
	char path[64], buf[512];
	snprintf(path, sizeof path, "/proc/%u/stat", pid);
	FILE *f = fopen(path, "r");
	if (f == NULL)
		return 0;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = 0;
	char *p = strrchr(buf, ')'); /* the state follows the command name */
	return p == NULL || p[1] == 0 || p[2] != 'Z';
}

static nvmlDevice_t slotFor(const char *uuid)
{
	for (int i = 0; i < nslots; i++)
		if (strcmp(slots[i].uuid, uuid) == 0)
			return &slots[i];
	if (nslots == MAX_GPUS)
		return NULL;
	copy(slots[nslots].uuid, sizeof slots[0].uuid, uuid);
	return &slots[nslots++];
}

static struct gpuState *gpuOf(const char *uuid)
{
	for (int i = 0; i < st.ngpus; i++)
		if (strcmp(st.gpus[i].uuid, uuid) == 0)
			return &st.gpus[i];
	return NULL;
}

/* begin takes the lock and reads the state; every entry point starts here. */
static int begin(const char *name)
{
	pthread_mutex_lock(&mu);
	note(name);
	if (!initialized)
		return NVML_ERROR_UNINITIALIZED;
	if (!load())
		return NVML_ERROR_DRIVER_NOT_LOADED;
	return NVML_SUCCESS;
}

static int end(int ret)
{
	pthread_mutex_unlock(&mu);
	return ret;
}

/* device resolves a handle to its GPU's state: NULL with *ret set when
 * the GPU is gone or lost (unless lostOK). */
static struct gpuState *device(nvmlDevice_t d, int lostOK, int *ret)
{
	if (d < &slots[0] || d >= &slots[nslots]) {
		*ret = NVML_ERROR_INVALID_ARGUMENT;
		return NULL;
	}
	struct gpuState *g = gpuOf(d->uuid);
	if (g == NULL || (g->lost && !lostOK)) {
		*ret = NVML_ERROR_GPU_IS_LOST;
		return NULL;
	}
	*ret = NVML_SUCCESS;
	return g;
}

/* Init and shutdown. */

static int initCommon(const char *name)
{
	pthread_mutex_lock(&mu);
	note(name);
	int ret = load() ? st.init : NVML_ERROR_DRIVER_NOT_LOADED;
	if (ret == NVML_SUCCESS)
		initialized++;
	return end(ret);
}

API int nvmlInit(void) { return initCommon("nvmlInit"); }
API int nvmlInit_v2(void) { return initCommon("nvmlInit_v2"); }
API int nvmlInitWithFlags(unsigned int flags)
{
	(void)flags;
	return initCommon("nvmlInitWithFlags");
}

API int nvmlShutdown(void)
{
	pthread_mutex_lock(&mu);
	note("nvmlShutdown");
	if (!initialized)
		return end(NVML_ERROR_UNINITIALIZED);
	initialized--;
	return end(NVML_SUCCESS);
}

API const char *nvmlErrorString(int r)
{
	switch (r) {
	case NVML_SUCCESS: return "Success";
	case NVML_ERROR_UNINITIALIZED: return "Uninitialized";
	case NVML_ERROR_INVALID_ARGUMENT: return "Invalid Argument";
	case NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
	case NVML_ERROR_NO_PERMISSION: return "Insufficient Permissions";
	case NVML_ERROR_NOT_FOUND: return "Not Found";
	case NVML_ERROR_INSUFFICIENT_SIZE: return "Insufficient Size";
	case NVML_ERROR_DRIVER_NOT_LOADED: return "Driver Not Loaded";
	case NVML_ERROR_TIMEOUT: return "Timeout";
	case NVML_ERROR_GPU_IS_LOST: return "GPU is lost";
	case NVML_ERROR_LIB_RM_VERSION_MISMATCH: return "Driver/library version mismatch";
	}
	return "Unknown Error";
}

API int nvmlSystemGetDriverVersion(char *version, unsigned int length)
{
	int ret = begin("nvmlSystemGetDriverVersion");
	if (ret != NVML_SUCCESS)
		return end(ret);
	if (strlen(st.driver) + 1 > length)
		return end(NVML_ERROR_INSUFFICIENT_SIZE);
	copy(version, length, st.driver);
	return end(NVML_SUCCESS);
}

/* Enumeration. */

static int getCount(const char *name, unsigned int *count)
{
	int ret = begin(name);
	if (ret != NVML_SUCCESS)
		return end(ret);
	*count = (unsigned int)st.ngpus;
	return end(NVML_SUCCESS);
}

API int nvmlDeviceGetCount(unsigned int *count) { return getCount("nvmlDeviceGetCount", count); }
API int nvmlDeviceGetCount_v2(unsigned int *count) { return getCount("nvmlDeviceGetCount_v2", count); }

static int byIndex(const char *name, unsigned int index, nvmlDevice_t *d)
{
	int ret = begin(name);
	if (ret != NVML_SUCCESS)
		return end(ret);
	if (index >= (unsigned int)st.ngpus)
		return end(NVML_ERROR_INVALID_ARGUMENT);
	*d = slotFor(st.gpus[index].uuid);
	return end(*d ? NVML_SUCCESS : NVML_ERROR_UNKNOWN);
}

API int nvmlDeviceGetHandleByIndex(unsigned int i, nvmlDevice_t *d) { return byIndex("nvmlDeviceGetHandleByIndex", i, d); }
API int nvmlDeviceGetHandleByIndex_v2(unsigned int i, nvmlDevice_t *d) { return byIndex("nvmlDeviceGetHandleByIndex_v2", i, d); }

API int nvmlDeviceGetHandleByUUID(const char *uuid, nvmlDevice_t *d)
{
	int ret = begin("nvmlDeviceGetHandleByUUID");
	if (ret != NVML_SUCCESS)
		return end(ret);
	struct gpuState *g = gpuOf(uuid);
	if (g == NULL)
		return end(NVML_ERROR_NOT_FOUND);
	if (g->lost)
		return end(NVML_ERROR_GPU_IS_LOST);
	*d = slotFor(uuid);
	return end(*d ? NVML_SUCCESS : NVML_ERROR_UNKNOWN);
}

/* What a GPU is. */

API int nvmlDeviceGetUUID(nvmlDevice_t d, char *uuid, unsigned int length)
{
	int ret = begin("nvmlDeviceGetUUID");
	if (ret != NVML_SUCCESS)
		return end(ret);
	struct gpuState *g = device(d, 1, &ret);
	if (g == NULL)
		return end(ret);
	if (strlen(g->uuid) + 1 > length)
		return end(NVML_ERROR_INSUFFICIENT_SIZE);
	copy(uuid, length, g->uuid);
	return end(NVML_SUCCESS);
}

API int nvmlDeviceGetName(nvmlDevice_t d, char *name, unsigned int length)
{
	int ret = begin("nvmlDeviceGetName");
	if (ret != NVML_SUCCESS)
		return end(ret);
	struct gpuState *g = device(d, 0, &ret);
	if (g == NULL)
		return end(ret);
	if (strlen(g->name) + 1 > length)
		return end(NVML_ERROR_INSUFFICIENT_SIZE);
	copy(name, length, g->name);
	return end(NVML_SUCCESS);
}

static int pciInfo(const char *name, nvmlDevice_t d, nvmlPciInfo_t *pci)
{
	int ret = begin(name);
	if (ret != NVML_SUCCESS)
		return end(ret);
	struct gpuState *g = device(d, 0, &ret);
	if (g == NULL)
		return end(ret);
	memset(pci, 0, sizeof *pci);
	copy(pci->busId, sizeof pci->busId, g->busid);
	/* The legacy field holds the short form: "0000:07:00.0". */
	copy(pci->busIdLegacy, sizeof pci->busIdLegacy, strlen(g->busid) > 12 ? g->busid + 4 : g->busid);
	sscanf(g->busid, "%x:%x:%x", &pci->domain, &pci->bus, &pci->device);
	pci->pciDeviceId = 0x20b210de;
	return end(NVML_SUCCESS);
}

API int nvmlDeviceGetPciInfo(nvmlDevice_t d, nvmlPciInfo_t *p) { return pciInfo("nvmlDeviceGetPciInfo", d, p); }
API int nvmlDeviceGetPciInfo_v2(nvmlDevice_t d, nvmlPciInfo_t *p) { return pciInfo("nvmlDeviceGetPciInfo_v2", d, p); }
#if NVML_STUB_API >= 3
API int nvmlDeviceGetPciInfo_v3(nvmlDevice_t d, nvmlPciInfo_t *p) { return pciInfo("nvmlDeviceGetPciInfo_v3", d, p); }
#endif

/* What a GPU does. */

static unsigned long long held(const char *uuid)
{
	unsigned long long sum = 0;
	for (int i = 0; i < st.nprocs; i++)
		if (strcmp(st.procs[i].uuid, uuid) == 0 && alive(st.procs[i].pid))
			sum += st.procs[i].mem;
	return sum;
}

API int nvmlDeviceGetMemoryInfo(nvmlDevice_t d, nvmlMemory_t *mem)
{
	int ret = begin("nvmlDeviceGetMemoryInfo");
	if (ret != NVML_SUCCESS)
		return end(ret);
	struct gpuState *g = device(d, 0, &ret);
	if (g == NULL)
		return end(ret);
	mem->total = g->total;
	mem->used = g->reserved + held(g->uuid);
	mem->free = mem->used < mem->total ? mem->total - mem->used : 0;
	return end(NVML_SUCCESS);
}

API int nvmlDeviceGetUtilizationRates(nvmlDevice_t d, nvmlUtilization_t *u)
{
	int ret = begin("nvmlDeviceGetUtilizationRates");
	if (ret != NVML_SUCCESS)
		return end(ret);
	struct gpuState *g = device(d, 0, &ret);
	if (g == NULL)
		return end(ret);
	if (g->util < 0)
		return end(NVML_ERROR_NOT_SUPPORTED);
	u->gpu = (unsigned int)g->util;
	u->memory = 0;
	return end(NVML_SUCCESS);
}

static int procs(const char *name, nvmlDevice_t d, unsigned int *count, nvmlProcessInfo_t *infos)
{
	int ret = begin(name);
	if (ret != NVML_SUCCESS)
		return end(ret);
	struct gpuState *g = device(d, 0, &ret);
	if (g == NULL)
		return end(ret);
	unsigned int n = 0;
	for (int i = 0; i < st.nprocs; i++) {
		struct procState *p = &st.procs[i];
		if (strcmp(p->uuid, g->uuid) != 0 || !alive(p->pid))
			continue;
		if (infos != NULL && n < *count) {
			infos[n].pid = p->pid;
			infos[n].usedGpuMemory = p->mem;
			infos[n].gpuInstanceId = 0xFFFFFFFF;
			infos[n].computeInstanceId = 0xFFFFFFFF;
		}
		n++;
	}
	if (infos == NULL || n > *count) {
		*count = n;
		return end(n == 0 ? NVML_SUCCESS : NVML_ERROR_INSUFFICIENT_SIZE);
	}
	*count = n;
	return end(NVML_SUCCESS);
}

API int nvmlDeviceGetComputeRunningProcesses_v2(nvmlDevice_t d, unsigned int *c, nvmlProcessInfo_t *i)
{
	return procs("nvmlDeviceGetComputeRunningProcesses_v2", d, c, i);
}
#if NVML_STUB_API >= 3
API int nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t d, unsigned int *c, nvmlProcessInfo_t *i)
{
	return procs("nvmlDeviceGetComputeRunningProcesses_v3", d, c, i);
}
#endif

API int nvmlDeviceGetProcessUtilization(nvmlDevice_t d, void *samples, unsigned int *count, unsigned long long last)
{
	(void)samples;
	(void)last;
	int ret = begin("nvmlDeviceGetProcessUtilization");
	if (ret != NVML_SUCCESS)
		return end(ret);
	if (device(d, 0, &ret) == NULL)
		return end(ret);
	*count = 0;
	return end(NVML_ERROR_NOT_FOUND); /* no sample since last: as NVML says it */
}

API int nvmlDeviceGetP2PStatus(nvmlDevice_t a, nvmlDevice_t b, int index, int *status)
{
	int ret = begin("nvmlDeviceGetP2PStatus");
	if (ret != NVML_SUCCESS)
		return end(ret);
	struct gpuState *ga = device(a, 0, &ret);
	if (ga == NULL)
		return end(ret);
	struct gpuState *gb = device(b, 0, &ret);
	if (gb == NULL)
		return end(ret);
	*status = P2P_STATUS_NOT_SUPPORTED;
	for (int i = 0; index == P2P_CAPS_INDEX_NVLINK && i < st.nnvlink; i++) {
		if ((strcmp(st.nvlink[i][0], ga->uuid) == 0 && strcmp(st.nvlink[i][1], gb->uuid) == 0) ||
		    (strcmp(st.nvlink[i][1], ga->uuid) == 0 && strcmp(st.nvlink[i][0], gb->uuid) == 0))
			*status = P2P_STATUS_OK;
	}
	return end(NVML_SUCCESS);
}

/* Events. */

API int nvmlEventSetCreate(nvmlEventSet_t *set)
{
	int ret = begin("nvmlEventSetCreate");
	if (ret != NVML_SUCCESS)
		return end(ret);
	if (nsets == (int)(sizeof sets / sizeof sets[0]))
		return end(NVML_ERROR_UNKNOWN);
	*set = &sets[nsets++];
	/* Only Xids raised from now on are delivered. */
	(*set)->delivered = st.nxids;
	return end(NVML_SUCCESS);
}

API int nvmlEventSetFree(nvmlEventSet_t set)
{
	pthread_mutex_lock(&mu);
	note("nvmlEventSetFree");
	for (int i = 0; i < nslots; i++)
		if (slots[i].set == set)
			slots[i].events = 0, slots[i].set = NULL;
	return end(NVML_SUCCESS);
}

API int nvmlDeviceGetSupportedEventTypes(nvmlDevice_t d, unsigned long long *types)
{
	int ret = begin("nvmlDeviceGetSupportedEventTypes");
	if (ret != NVML_SUCCESS)
		return end(ret);
	if (device(d, 0, &ret) == NULL)
		return end(ret);
	*types = XID_CRITICAL_ERROR | 0x1 | 0x4; /* Xids, single- and double-bit ECC */
	return end(NVML_SUCCESS);
}

API int nvmlDeviceRegisterEvents(nvmlDevice_t d, unsigned long long types, nvmlEventSet_t set)
{
	int ret = begin("nvmlDeviceRegisterEvents");
	if (ret != NVML_SUCCESS)
		return end(ret);
	if (device(d, 0, &ret) == NULL)
		return end(ret);
	d->events |= types;
	d->set = set;
	return end(NVML_SUCCESS);
}

static int wait(const char *name, nvmlEventSet_t set, nvmlEventData_t *data, unsigned int timeoutms)
{
	int ret = begin(name);
	if (ret != NVML_SUCCESS)
		return end(ret);
	while (set->delivered < st.nxids) {
		struct xidState *x = &st.xids[set->delivered++];
		nvmlDevice_t d = NULL;
		for (int i = 0; i < nslots; i++)
			if (strcmp(slots[i].uuid, x->uuid) == 0)
				d = &slots[i];
		if (d == NULL || d->set != set || !(d->events & XID_CRITICAL_ERROR))
			continue; /* not registered: NVML would not have told */
		memset(data, 0, sizeof *data);
		data->device = d;
		data->eventType = XID_CRITICAL_ERROR;
		data->eventData = x->xid;
		data->gpuInstanceId = data->computeInstanceId = 0xFFFFFFFF;
		return end(NVML_SUCCESS);
	}
	pthread_mutex_unlock(&mu);
	if (timeoutms > 0)
		usleep((useconds_t)(timeoutms > 1000 ? 1000 : timeoutms) * 1000);
	return NVML_ERROR_TIMEOUT;
}

API int nvmlEventSetWait(nvmlEventSet_t s, nvmlEventData_t *d, unsigned int t) { return wait("nvmlEventSetWait", s, d, t); }
API int nvmlEventSetWait_v2(nvmlEventSet_t s, nvmlEventData_t *d, unsigned int t) { return wait("nvmlEventSetWait_v2", s, d, t); }
