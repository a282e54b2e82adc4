/*
 * A fake libnvidia-ml.so.1 for testing the unmodified nvidia-ml-py binding without a GPU.
 *
 * GPU state comes from the file named by $FAKE_NVML_STATE, re-read whenever its inode or mtime
 * changes (tests replace it atomically: write a temp file, rename). ctypes releases the GIL, so
 * several threads may be in here at once: a mutex guards the state.
 *
 * State file, one fact per line ('#' starts a comment):
 *   init_error CODE                 nvmlInit fails with CODE (9 driver not loaded, 18 version mismatch)
 *   driver 570.86.15                driver version string
 *   cuda 12080                      CUDA driver version (int)
 *   count N                         what nvmlDeviceGetCount reports
 *   gpu I name REST OF LINE
 *   gpu I uuid GPU-...
 *   gpu I pci 00000000:01:00.0
 *   gpu I mem TOTAL RESERVED USED   bytes, v2 meaning (v1 "used" includes reserved)
 *   gpu I util GPU MEM
 *   gpu I temp C
 *   gpu I power MW LIMIT_MW
 *   gpu I proc compute|graphics PID BYTES   (BYTES "na": not available)
 *   gpu I fail CALL CODE            CALL: handle name uuid pci mem util temp power limit compute graphics all
 *   gpu I hang CALL FLAGFILE        CALL blocks while FLAGFILE exists
 *
 * Built with -DFAKE_OLD_DRIVER it is a pre-510 driver: no _v3 process calls and no memory _v2.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define OK 0
#define ERR_INVALID_ARGUMENT 2
#define ERR_NOT_SUPPORTED 3
#define ERR_INSUFFICIENT_SIZE 7
#define ERR_NOT_FOUND 6
#define ERR_UNINITIALIZED 1
#define ERR_ARGUMENT_VERSION_MISMATCH 25
#define ERR_UNKNOWN 999

#define MAX_GPUS 16
#define MAX_PROCS 16

enum call { C_HANDLE, C_NAME, C_UUID, C_PCI, C_MEM, C_UTIL, C_TEMP, C_POWER, C_LIMIT, C_COMPUTE, C_GRAPHICS, C_N };
static const char *call_names[C_N] = {"handle", "name", "uuid", "pci", "mem", "util", "temp",
                                      "power", "limit", "compute", "graphics"};

struct proc { unsigned pid; unsigned long long used; int graphics; };
struct gpu {
    char name[96], uuid[96], pci[32];
    unsigned long long total, reserved, used;
    unsigned util_gpu, util_mem, temp, power_mw, limit_mw;
    int fail[C_N];
    char hang[C_N][256];
    struct proc procs[MAX_PROCS];
    int nprocs;
};
struct state {
    int init_error;
    char driver[80];
    int cuda;
    unsigned count;
    struct gpu gpus[MAX_GPUS];
};

/* The handle the binding holds is a pointer to one of these. */
struct device { unsigned index; };
static struct device devices[MAX_GPUS];

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct state st;
static ino_t state_ino;
static struct timespec state_mtime;
static int st_loaded;
static int init_refs;

static int call_of(const char *word) {
    for (int i = 0; i < C_N; i++)
        if (strcmp(word, call_names[i]) == 0) return i;
    if (strcmp(word, "all") == 0) return -2;
    return -1;
}

static void parse_line(char *line) {
    char key[32], word[32], rest[256];
    unsigned idx;
    int n;
    char *hash = strchr(line, '#');
    if (hash) *hash = 0;
    line[strcspn(line, "\r\n")] = 0;
    if (sscanf(line, "init_error %d", &st.init_error) == 1) return;
    if (sscanf(line, "driver %79s", st.driver) == 1) return;
    if (sscanf(line, "cuda %d", &st.cuda) == 1) return;
    if (sscanf(line, "count %u", &st.count) == 1) return;
    if (sscanf(line, "gpu %u %31s %n", &idx, key, &n) != 2 || idx >= MAX_GPUS) return;
    struct gpu *g = &st.gpus[idx];
    char *arg = line + n;
    if (strcmp(key, "name") == 0) {
        snprintf(g->name, sizeof g->name, "%s", arg);
    } else if (strcmp(key, "uuid") == 0) {
        sscanf(arg, "%95s", g->uuid);
    } else if (strcmp(key, "pci") == 0) {
        sscanf(arg, "%31s", g->pci);
    } else if (strcmp(key, "mem") == 0) {
        sscanf(arg, "%llu %llu %llu", &g->total, &g->reserved, &g->used);
    } else if (strcmp(key, "util") == 0) {
        sscanf(arg, "%u %u", &g->util_gpu, &g->util_mem);
    } else if (strcmp(key, "temp") == 0) {
        sscanf(arg, "%u", &g->temp);
    } else if (strcmp(key, "power") == 0) {
        sscanf(arg, "%u %u", &g->power_mw, &g->limit_mw);
    } else if (strcmp(key, "proc") == 0 && g->nprocs < MAX_PROCS) {
        struct proc *p = &g->procs[g->nprocs];
        if (sscanf(arg, "%31s %u %255s", word, &p->pid, rest) != 3) return;
        p->graphics = strcmp(word, "graphics") == 0;
        p->used = strcmp(rest, "na") == 0 ? ~0ULL : strtoull(rest, NULL, 10);
        g->nprocs++;
    } else if (strcmp(key, "fail") == 0) {
        int code, c;
        if (sscanf(arg, "%31s %d", word, &code) != 2) return;
        c = call_of(word);
        if (c == -2) {
            for (int i = C_NAME; i < C_N; i++) g->fail[i] = code;
        } else if (c >= 0) {
            g->fail[c] = code;
        }
    } else if (strcmp(key, "hang") == 0) {
        int c;
        if (sscanf(arg, "%31s %255s", word, rest) != 2) return;
        c = call_of(word);
        if (c >= 0) snprintf(g->hang[c], sizeof g->hang[c], "%s", rest);
    }
}

/* Re-read the state file when it was replaced or modified. Caller holds the lock. */
static void refresh(void) {
    const char *path = getenv("FAKE_NVML_STATE");
    struct stat sb;
    if (!path || stat(path, &sb) != 0) return;
    if (st_loaded && sb.st_ino == state_ino && sb.st_mtim.tv_sec == state_mtime.tv_sec &&
        sb.st_mtim.tv_nsec == state_mtime.tv_nsec)
        return;
    FILE *f = fopen(path, "r");
    if (!f) return;
    memset(&st, 0, sizeof st);
    char line[512];
    while (fgets(line, sizeof line, f)) parse_line(line);
    fclose(f);
    state_ino = sb.st_ino;
    state_mtime = sb.st_mtim;
    st_loaded = 1;
}

/* Copy the GPU's state under the lock; then block (outside the lock) while its hang flag exists. */
static int gpu_call(void *handle, enum call c, struct gpu *out) {
    struct device *d = handle;
    char flag[256] = "";
    int rc;
    if (!d || d < devices || d >= devices + MAX_GPUS) return ERR_INVALID_ARGUMENT;
    pthread_mutex_lock(&lock);
    refresh();
    if (!init_refs) {
        pthread_mutex_unlock(&lock);
        return ERR_UNINITIALIZED;
    }
    *out = st.gpus[d->index];
    rc = out->fail[c];
    snprintf(flag, sizeof flag, "%s", out->hang[c]);
    pthread_mutex_unlock(&lock);
    if (flag[0]) {
        while (access(flag, F_OK) == 0) usleep(5000);
    }
    return rc;
}

static const char *error_string(int code) {
    switch (code) {
    case 0: return "Success";
    case 3: return "Not Supported";
    case 9: return "Driver Not Loaded";
    case 15: return "GPU is lost";
    case 18: return "RM has detected an NVML/RM version mismatch.";
    case 25: return "Argument version mismatch";
    default: return "Unknown Error";
    }
}

/* ------------------------------------------------------------------ init */
int nvmlInitWithFlags(unsigned flags) {
    (void)flags;
    pthread_mutex_lock(&lock);
    refresh();
    int rc = st.init_error;
    if (rc == 0) init_refs++;
    pthread_mutex_unlock(&lock);
    return rc;
}
int nvmlInit_v2(void) { return nvmlInitWithFlags(0); }
int nvmlInit(void) { return nvmlInitWithFlags(0); }
int nvmlShutdown(void) {
    pthread_mutex_lock(&lock);
    int rc = init_refs > 0 ? (init_refs--, OK) : ERR_UNINITIALIZED;
    pthread_mutex_unlock(&lock);
    return rc;
}
const char *nvmlErrorString(int code) { return error_string(code); }

/* ------------------------------------------------------------------ system */
static int system_read(void) {
    pthread_mutex_lock(&lock);
    refresh();
    int ok = init_refs > 0;
    pthread_mutex_unlock(&lock);
    return ok ? OK : ERR_UNINITIALIZED;
}
int nvmlSystemGetDriverVersion(char *version, unsigned length) {
    int rc = system_read();
    if (rc) return rc;
    pthread_mutex_lock(&lock);
    snprintf(version, length, "%s", st.driver);
    pthread_mutex_unlock(&lock);
    return OK;
}
int nvmlSystemGetNVMLVersion(char *version, unsigned length) {
    int rc = system_read();
    if (rc) return rc;
    pthread_mutex_lock(&lock);
    snprintf(version, length, "12.%s", st.driver);
    pthread_mutex_unlock(&lock);
    return OK;
}
int nvmlSystemGetCudaDriverVersion(int *v) {
    int rc = system_read();
    if (rc) return rc;
    pthread_mutex_lock(&lock);
    *v = st.cuda;
    pthread_mutex_unlock(&lock);
    return OK;
}
int nvmlSystemGetCudaDriverVersion_v2(int *v) { return nvmlSystemGetCudaDriverVersion(v); }
int nvmlSystemGetProcessName(unsigned pid, char *name, unsigned length) {
    char path[64];
    int rc = system_read();
    if (rc) return rc;
    snprintf(path, sizeof path, "/proc/%u/comm", pid);
    FILE *f = fopen(path, "r");
    if (!f) return ERR_NOT_FOUND;
    if (!fgets(name, (int)length, f)) name[0] = 0;
    fclose(f);
    name[strcspn(name, "\n")] = 0;
    return OK;
}

/* ------------------------------------------------------------------ devices */
int nvmlDeviceGetCount_v2(unsigned *count) {
    int rc = system_read();
    if (rc) return rc;
    pthread_mutex_lock(&lock);
    *count = st.count;
    pthread_mutex_unlock(&lock);
    return OK;
}
int nvmlDeviceGetCount(unsigned *count) { return nvmlDeviceGetCount_v2(count); }

int nvmlDeviceGetHandleByIndex_v2(unsigned index, void **device) {
    struct gpu g;
    if (index >= MAX_GPUS) return ERR_INVALID_ARGUMENT;
    pthread_mutex_lock(&lock);
    refresh();
    unsigned count = st.count;
    pthread_mutex_unlock(&lock);
    if (index >= count) return ERR_INVALID_ARGUMENT;
    devices[index].index = index;
    int rc = gpu_call(&devices[index], C_HANDLE, &g);
    if (rc) return rc;
    *device = &devices[index];
    return OK;
}
int nvmlDeviceGetHandleByIndex(unsigned index, void **device) { return nvmlDeviceGetHandleByIndex_v2(index, device); }

int nvmlDeviceGetName(void *h, char *name, unsigned length) {
    struct gpu g;
    int rc = gpu_call(h, C_NAME, &g);
    if (!rc) snprintf(name, length, "%s", g.name);
    return rc;
}
int nvmlDeviceGetUUID(void *h, char *uuid, unsigned length) {
    struct gpu g;
    int rc = gpu_call(h, C_UUID, &g);
    if (!rc) snprintf(uuid, length, "%s", g.uuid);
    return rc;
}

struct pci_info { /* nvmlPciInfo_t, 68 bytes */
    char busIdLegacy[16];
    unsigned domain, bus, device, pciDeviceId, pciSubSystemId;
    char busId[32];
};
int nvmlDeviceGetPciInfo_v3(void *h, struct pci_info *pci) {
    struct gpu g;
    int rc = gpu_call(h, C_PCI, &g);
    if (rc) return rc;
    memset(pci, 0, sizeof *pci);
    snprintf(pci->busId, sizeof pci->busId, "%s", g.pci);
    snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, "%s", g.pci + (strlen(g.pci) > 12 ? 4 : 0));
    sscanf(g.pci, "%x:%x:%x", &pci->domain, &pci->bus, &pci->device);
    return OK;
}

struct memory_v1 { unsigned long long total, free, used; };
int nvmlDeviceGetMemoryInfo(void *h, struct memory_v1 *m) {
    struct gpu g;
    int rc = gpu_call(h, C_MEM, &g);
    if (rc) return rc;
    m->total = g.total;
    m->used = g.used + g.reserved; /* v1 "used" includes the reserved memory */
    m->free = g.total - m->used;
    return OK;
}

#ifndef FAKE_OLD_DRIVER
struct memory_v2 { unsigned version; unsigned long long total, reserved, free, used; };
int nvmlDeviceGetMemoryInfo_v2(void *h, struct memory_v2 *m) {
    struct gpu g;
    if (m->version != 0x02000028) return ERR_ARGUMENT_VERSION_MISMATCH;
    int rc = gpu_call(h, C_MEM, &g);
    if (rc) return rc;
    m->total = g.total;
    m->reserved = g.reserved;
    m->used = g.used;
    m->free = g.total - g.used - g.reserved;
    return OK;
}
#endif

struct utilization { unsigned gpu, memory; };
int nvmlDeviceGetUtilizationRates(void *h, struct utilization *u) {
    struct gpu g;
    int rc = gpu_call(h, C_UTIL, &g);
    if (!rc) {
        u->gpu = g.util_gpu;
        u->memory = g.util_mem;
    }
    return rc;
}
int nvmlDeviceGetTemperature(void *h, int sensor, unsigned *t) {
    struct gpu g;
    if (sensor != 0) return ERR_NOT_SUPPORTED;
    int rc = gpu_call(h, C_TEMP, &g);
    if (!rc) *t = g.temp;
    return rc;
}
int nvmlDeviceGetPowerUsage(void *h, unsigned *mw) {
    struct gpu g;
    int rc = gpu_call(h, C_POWER, &g);
    if (!rc) *mw = g.power_mw;
    return rc;
}
int nvmlDeviceGetEnforcedPowerLimit(void *h, unsigned *mw) {
    struct gpu g;
    int rc = gpu_call(h, C_LIMIT, &g);
    if (!rc) *mw = g.limit_mw;
    return rc;
}
int nvmlDeviceGetPowerManagementLimit(void *h, unsigned *mw) { return nvmlDeviceGetEnforcedPowerLimit(h, mw); }

struct process_info { /* nvmlProcessInfo_v2_t == _v3_t, 24 bytes */
    unsigned pid;
    unsigned long long usedGpuMemory;
    unsigned gpuInstanceId, computeInstanceId;
};
static int running_processes(void *h, int graphics, unsigned *count, struct process_info *out) {
    struct gpu g;
    unsigned n = 0;
    int rc = gpu_call(h, graphics ? C_GRAPHICS : C_COMPUTE, &g);
    if (rc) return rc;
    for (int i = 0; i < g.nprocs; i++) n += g.procs[i].graphics == graphics;
    if (n == 0) {
        *count = 0;
        return OK;
    }
    if (!out || *count < n) {
        *count = n;
        return ERR_INSUFFICIENT_SIZE;
    }
    unsigned k = 0;
    for (int i = 0; i < g.nprocs; i++) {
        if (g.procs[i].graphics != graphics) continue;
        out[k].pid = g.procs[i].pid;
        out[k].usedGpuMemory = g.procs[i].used;
        out[k].gpuInstanceId = 0xFFFFFFFF;
        out[k].computeInstanceId = 0xFFFFFFFF;
        k++;
    }
    *count = k;
    return OK;
}
int nvmlDeviceGetComputeRunningProcesses_v2(void *h, unsigned *c, struct process_info *p) { return running_processes(h, 0, c, p); }
int nvmlDeviceGetGraphicsRunningProcesses_v2(void *h, unsigned *c, struct process_info *p) { return running_processes(h, 1, c, p); }
#ifndef FAKE_OLD_DRIVER
int nvmlDeviceGetComputeRunningProcesses_v3(void *h, unsigned *c, struct process_info *p) { return running_processes(h, 0, c, p); }
int nvmlDeviceGetGraphicsRunningProcesses_v3(void *h, unsigned *c, struct process_info *p) { return running_processes(h, 1, c, p); }
#endif
