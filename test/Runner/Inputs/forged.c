/* Forged-verdict kernels: candidates that compute the wrong thing (or nothing) and try to get a "correct"
 * verdict by attacking the runner instead of computing. Built by forge.py into an artifact whose manifest is
 * a real kforge-compile manifest of the same signature (y = x @ w + 1, x: MxK, w: KxN, y: MxN, fp32), so the
 * runner loads them like any candidate. One source, one attack per build: -DATTACK_<NAME>.
 *
 * On a GPU manifest (-DDEVICE_BUFFERS) the descriptors hold device pointers: the kernels that compute do so on
 * the host through the CUDA driver's copies (libcuda.so.1 is already loaded by the executor, or the test's
 * mock of it).
 *
 * Attacks (what a contained executor must make harmless; the verdict must never be "correct" for a kernel
 * that does not compute y):
 *   CORRECT        computes y (the control: must pass)
 *   ZEROS          writes zeros (the control: an honest wrong kernel)
 *   PLANTED        computes x @ w + 2: wrong, but deterministic and never constant, so a reference planted with
 *                  the same library agrees with it (test/Tune/cache-planting.test)
 *   FD_EXIT        fake verdict/reply JSON lines on fds 1 and 3..31, then _exit(0), computing nothing
 *   FD_RETURN      the same lines, then returns without computing (the lines stay queued for later trials)
 *   FD_CORRECT     the same lines, then computes y (its own verdict may be "correct"; later trials must not be
 *                  answered by its lines)
 *   FD_CTOR        the same lines from a constructor (at load time), computing nothing
 *   KILL_PARENT    kill(getppid(), SIGKILL), computing nothing
 *   STOP_PARENT    kill(getppid(), SIGSTOP), computing nothing (a stopped judge cannot time anything out)
 *   KILL_ALL       kill(-1, SIGKILL) and kill(0, SIGKILL), computing nothing; both are first probed with
 *                  signal 0 (which delivers nothing): when the probe is allowed, the kernel exits 77 instead
 *                  of killing every process of the user (the test then fails with "exited with status 77")
 *   FORGE_REPORT   writes a "correct" report over the judge's --output file (found in /proc/<judge>/cmdline)
 *                  and over every candidates/N/run.json of a kforge-tune run directory, then kills the judge
 *   WRITE_OUTSIDE  creates files beside the candidate's directory and in $TMPDIR, computing nothing
 *   REPLAY         computes y on its first call only and returns at once on later ones, so a runner that kept an
 *                  earlier run's outputs in reused buffers would hand them back as this run's (they must read
 *                  as unwritten: every run's buffers are poisoned again)
 *   PLANT_SEED     computes x @ w (without the + 1: wrong) and writes that into the judge's seed cache
 *                  (--cache-dir from /proc/<judge>/cmdline) as the reference's outputs, for the next run
 *   PROC_READER    computes y, and reads /proc/self/{status,maps,environ} and the judge's environ and
 *                  cmdline, printing every environment entry to stderr (where the key would leak from)
 *   MITM           computes y for itself, and leaves a thread behind (the library is linked -z nodelete) that
 *                  sits between the judge and the executor on the channel: for every later candidate it writes
 *                  y into the shared output memory after the candidate ran, and it answers timing requests
 *                  with a fast forged timing
 *   SLOW_FORGED_TIMING  computes y slowly (20 ms a call) and, through the same thread, answers the judge's
 *                  timing request for itself with 0.05 ms
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#ifndef M
#define M 64
#endif
#ifndef K
#define K 64
#endif
#ifndef N
#define N 64
#endif
#ifndef ENTRY
#define ENTRY _mlir_ciface_kernel
#endif

#define UNUSED __attribute__((unused))

typedef struct {
  float *allocated, *aligned;
  int64_t offset, sizes[2], strides[2];
} Desc2;

static const char kFakeVerdict[] =
    "{\"ok\":true,\"run_ms\":0.001,\"kernels\":[0,0],\"device_seed_kept\":false,\"status\":\"correct\","
    "\"reason\":\"\",\"timing\":{\"median_ms\":0.01,\"min_ms\":0.01,\"max_ms\":0.01,\"p10_ms\":0.01,"
    "\"p90_ms\":0.01,\"reps\":20,\"clock\":\"forged\"},\"server\":{\"pid\":1,\"request\":1},\"nonce\":\"0\","
    "\"id\":1}\n";

/* ---- buffers: host pointers on a CPU manifest, device pointers (copied through libcuda) on a GPU one ---- */
#ifdef DEVICE_BUFFERS
typedef int (*CopyFn)(void *, const void *, size_t);
static void copyIn(float *host, const Desc2 *d, size_t count) {
  static CopyFn dtoh;
  if (!dtoh)
    dtoh = (CopyFn)dlsym(dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL), "cuMemcpyDtoH_v2");
  dtoh(host, (const void *)(d->aligned + d->offset), count * sizeof(float));
}
static void copyOut(const Desc2 *d, const float *host, size_t count) {
  static int (*htod)(uintptr_t, const void *, size_t);
  if (!htod)
    htod = (int (*)(uintptr_t, const void *, size_t))dlsym(dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL),
                                                           "cuMemcpyHtoD_v2");
  htod((uintptr_t)(d->aligned + d->offset), host, count * sizeof(float));
}
#else
static void copyIn(float *host, const Desc2 *d, size_t count) {
  memcpy(host, d->aligned + d->offset, count * sizeof(float));
}
static void copyOut(const Desc2 *d, const float *host, size_t count) {
  memcpy(d->aligned + d->offset, host, count * sizeof(float));
}
#endif

static float hx[M * K], hw[K * N], hy[M * N];

/* y = x @ w + bias */
static void matmul(const float *x, const float *w, float *y, float bias) {
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      float acc = bias;
      for (int k = 0; k < K; ++k)
        acc += x[i * K + k] * w[k * N + j];
      y[i * N + j] = acc;
    }
}

UNUSED static void compute(Desc2 *x, Desc2 *w, Desc2 *y, float bias) {
  copyIn(hx, x, M * K);
  copyIn(hw, w, K * N);
  matmul(hx, hw, hy, bias);
  copyOut(y, hy, M * N);
}

static void writeAll(int fd, const char *text, size_t length) {
  while (length > 0) {
    ssize_t n = write(fd, text, length);
    if (n <= 0)
      return;
    text += n;
    length -= (size_t)n;
  }
}

UNUSED static void fakeLines(int copies) {
  for (int fd = 1; fd <= 31; ++fd) {
    if (fd == 2)
      continue;
    for (int i = 0; i < copies; ++i)
      writeAll(fd, kFakeVerdict, sizeof(kFakeVerdict) - 1);
  }
}

/* The judge's command line, NUL-separated, and the value after `flag` in it ("" if none). */
static char judgeCmdline[1 << 16];
static size_t judgeCmdlineSize;
UNUSED static void readJudgeCmdline(void) {
  char path[64];
  snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)getppid());
  int fd = open(path, O_RDONLY);
  judgeCmdlineSize = 0;
  if (fd < 0)
    return;
  ssize_t n = read(fd, judgeCmdline, sizeof(judgeCmdline) - 1);
  close(fd);
  judgeCmdlineSize = n > 0 ? (size_t)n : 0;
  judgeCmdline[judgeCmdlineSize] = '\0';
}
UNUSED static const char *judgeFlag(const char *flag) {
  for (size_t at = 0; at < judgeCmdlineSize; at += strlen(judgeCmdline + at) + 1)
    if (strcmp(judgeCmdline + at, flag) == 0 && at + strlen(flag) + 1 < judgeCmdlineSize)
      return judgeCmdline + at + strlen(flag) + 1;
  return "";
}

UNUSED static void writeFile(const char *path, const char *text) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0)
    return;
  writeAll(fd, text, strlen(text));
  close(fd);
}

UNUSED static const char kForgedReport[] =
    "{\"status\": \"correct\", \"reason\": \"forged by the candidate\", \"timing\": {\"median_ms\": 0.01, "
    "\"min_ms\": 0.01, \"max_ms\": 0.01, \"p10_ms\": 0.01, \"p90_ms\": 0.01, \"reps\": 20}}\n";

/* ---- the man in the middle (MITM, SLOW_FORGED_TIMING) ---- */
#if defined(ATTACK_MITM) || defined(ATTACK_SLOW_FORGED_TIMING)
static int realChannel = -1, executorSide = -1;
static float *sharedMemory;

static float *findSharedMemory(void) {
  FILE *maps = fopen("/proc/self/maps", "r");
  char line[512];
  float *found = NULL;
  while (maps && fgets(line, sizeof(line), maps))
    if (strstr(line, "kforge-arguments")) {
      found = (float *)(uintptr_t)strtoull(line, NULL, 16);
      break;
    }
  if (maps)
    fclose(maps);
  return found;
}

/* Reads one line from fd into buf (without the newline); 0 at end of file. */
static size_t readLine(int fd, char *buf, size_t capacity) {
  size_t n = 0;
  char c;
  while (n + 1 < capacity) {
    ssize_t got = read(fd, &c, 1);
    if (got <= 0)
      return 0;
    if (c == '\n')
      break;
    buf[n++] = c;
  }
  buf[n] = '\0';
  return n + 1;
}

static void *mitm(void *unused) {
  (void)unused;
  static char command[1 << 20], answer[1 << 20];
  int unloaded = 0; /* after our own candidate slot was unloaded, every candidate is someone else */
  /* The executor's answer to the command in flight (the run that started this thread) comes first. */
  if (readLine(executorSide, answer, sizeof(answer))) {
    writeAll(realChannel, answer, strlen(answer));
    writeAll(realChannel, "\n", 1);
  }
  while (readLine(realChannel, command, sizeof(command))) {
    int isRun = strstr(command, "\"op\":\"run\"") && strstr(command, "\"slot\":\"candidate\"");
    int isTime = strstr(command, "\"op\":\"time\"") && strstr(command, "\"slot\":\"candidate\"");
    int isUnload = strstr(command, "\"op\":\"unload\"") && strstr(command, "\"slot\":\"candidate\"");
#ifdef ATTACK_SLOW_FORGED_TIMING
    int forgeTime = isTime && !unloaded;
#else
    int forgeTime = isTime && unloaded;
#endif
    if (forgeTime) {
      static const char fast[] = "{\"ok\":true,\"timing\":{\"median_ms\":0.05,\"min_ms\":0.05,\"max_ms\":0.05,"
                                 "\"p10_ms\":0.05,\"p90_ms\":0.05,\"reps\":20,\"clock\":\"forged\"}}\n";
      writeAll(realChannel, fast, sizeof(fast) - 1);
      continue;
    }
    writeAll(executorSide, command, strlen(command));
    writeAll(executorSide, "\n", 1);
    if (!readLine(executorSide, answer, sizeof(answer)))
      break;
    if (isRun && unloaded && sharedMemory) {
      /* The judge laid the arguments out in order, each on a 64-byte boundary: x, w, then y. */
      float *x = sharedMemory, *w = x + (M * K + 15) / 16 * 16, *y = w + (K * N + 15) / 16 * 16;
      matmul(x, w, y, 1.0f);
    }
    if (isUnload)
      unloaded = 1;
    writeAll(realChannel, answer, strlen(answer));
    writeAll(realChannel, "\n", 1);
  }
  _exit(0);
  return NULL;
}

static void startMitm(void) {
  static int started;
  if (started++)
    return;
  int pair[2];
  sharedMemory = findSharedMemory();
  realChannel = fcntl(3, F_DUPFD_CLOEXEC, 100);
  if (realChannel < 0 || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0)
    return;
  if (dup2(pair[0], 3) != 3)
    return;
  close(pair[0]);
  executorSide = pair[1];
  pthread_t thread;
  pthread_create(&thread, NULL, mitm, NULL);
  pthread_detach(thread);
}
#endif

#ifdef ATTACK_FD_CTOR
__attribute__((constructor)) static void atLoad(void) { fakeLines(4); }
#endif

void ENTRY(Desc2 *x, Desc2 *w, Desc2 *y) {
#if defined(ATTACK_CORRECT)
  compute(x, w, y, 1.0f);
#elif defined(ATTACK_PLANTED)
  compute(x, w, y, 2.0f);
#elif defined(ATTACK_REPLAY)
  static int calls;
  if (calls++ == 0)
    compute(x, w, y, 1.0f);
#elif defined(ATTACK_ZEROS)
  (void)x, (void)w;
  memset(hy, 0, sizeof(hy));
  copyOut(y, hy, M * N);
#elif defined(ATTACK_FD_EXIT)
  (void)x, (void)w, (void)y;
  fakeLines(4);
  _exit(0);
#elif defined(ATTACK_FD_RETURN)
  (void)x, (void)w, (void)y;
  fakeLines(4);
#elif defined(ATTACK_FD_CORRECT)
  fakeLines(4);
  compute(x, w, y, 1.0f);
#elif defined(ATTACK_FD_CTOR)
  (void)x, (void)w, (void)y;
#elif defined(ATTACK_KILL_PARENT)
  (void)x, (void)w, (void)y;
  kill(getppid(), SIGKILL);
#elif defined(ATTACK_STOP_PARENT)
  (void)x, (void)w, (void)y;
  kill(getppid(), SIGSTOP);
#elif defined(ATTACK_KILL_ALL)
  (void)x, (void)w, (void)y;
  /* Signal 0 checks permission and delivers nothing: if it is allowed, a real kill(-1) would have ended
   * every process of this user; say so by exiting 77 instead. */
  if (kill(-1, 0) == 0 || kill(0, 0) == 0) {
    fprintf(stderr, "forged: kill(-1)/kill(0) were permitted (not sent)\n");
    _exit(77);
  }
  kill(-1, SIGKILL);
  kill(0, SIGKILL);
#elif defined(ATTACK_FORGE_REPORT)
  (void)x, (void)w, (void)y;
  readJudgeCmdline();
  const char *output = judgeFlag("--output");
  if (*output) {
    writeFile(output, kForgedReport);
    char tmp[4200];
    snprintf(tmp, sizeof(tmp), "%s.tmp-%d", output, (int)getppid());
    writeFile(tmp, kForgedReport);
  }
  /* kforge-tune's run directory: <run>/baseline is the reference; every candidates/N/run.json. */
  const char *reference = judgeFlag("--reference");
  if (*reference) {
    char dir[4200];
    snprintf(dir, sizeof(dir), "%s/../candidates", reference);
    DIR *listing = opendir(dir);
    struct dirent *entry;
    while (listing && (entry = readdir(listing)))
      if (entry->d_name[0] != '.') {
        char path[4600];
        snprintf(path, sizeof(path), "%s/%s/run.json", dir, entry->d_name);
        writeFile(path, kForgedReport);
      }
    if (listing)
      closedir(listing);
  }
  kill(getppid(), SIGKILL);
#elif defined(ATTACK_WRITE_OUTSIDE)
  (void)x, (void)w, (void)y;
  readJudgeCmdline();
  char path[4300];
  const char *candidate = judgeFlag("--candidate");
  if (*candidate) {
    snprintf(path, sizeof(path), "%s/../escaped-by-candidate", candidate);
    writeFile(path, "escaped\n");
    snprintf(path, sizeof(path), "%s/escaped-by-candidate", candidate);
    writeFile(path, "escaped\n");
  }
  const char *tmp = getenv("TMPDIR");
  snprintf(path, sizeof(path), "%s/escaped-by-candidate-%d", tmp && *tmp ? tmp : "/tmp", (int)getppid());
  writeFile(path, "escaped\n");
  const char *reference = judgeFlag("--reference");
  if (*reference) {
    snprintf(path, sizeof(path), "%s/../escaped-by-candidate", reference);
    writeFile(path, "escaped\n");
  }
#elif defined(ATTACK_PLANT_SEED)
  compute(x, w, y, 0.0f); /* wrong: the payload adds 1 */
  readJudgeCmdline();
  const char *cache = judgeFlag("--cache-dir");
  DIR *root = *cache ? opendir(cache) : NULL;
  struct dirent *entry;
  while (root && (entry = readdir(root))) {
    if (entry->d_name[0] == '.')
      continue;
    for (int seed = 0; seed < 16; ++seed) {
      char path[4600];
      snprintf(path, sizeof(path), "%s/%s/seed%d.inputs.0.f32", cache, entry->d_name, seed);
      static float cached[M * K];
      FILE *f = fopen(path, "rb");
      int same = f && fread(cached, sizeof(float), M * K, f) == M * K && memcmp(cached, hx, sizeof(hx)) == 0;
      if (f)
        fclose(f);
      if (!same)
        continue;
      snprintf(path, sizeof(path), "%s/%s/seed%d.outputs.2.f32", cache, entry->d_name, seed);
      f = fopen(path, "wb");
      if (f) {
        fwrite(hy, sizeof(float), M * N, f);
        fclose(f);
      }
    }
  }
  if (root)
    closedir(root);
#elif defined(ATTACK_PROC_READER)
  compute(x, w, y, 1.0f);
  static char buffer[1 << 16];
  char judge[64];
  snprintf(judge, sizeof(judge), "/proc/%d/environ", (int)getppid());
  const char *paths[] = {"/proc/self/status", "/proc/self/maps", "/proc/self/environ", judge};
  for (size_t p = 0; p < sizeof(paths) / sizeof(paths[0]); ++p) {
    int fd = open(paths[p], O_RDONLY);
    if (fd < 0)
      continue;
    ssize_t n = read(fd, buffer, sizeof(buffer) - 1);
    close(fd);
    if (n <= 0 || !strstr(paths[p], "environ"))
      continue;
    for (ssize_t i = 0; i < n; ++i)
      if (buffer[i] == '\0')
        buffer[i] = '\n';
    fprintf(stderr, "forged: %s:\n", paths[p]);
    fwrite(buffer, 1, (size_t)n, stderr);
  }
  extern char **environ;
  for (char **e = environ; *e; ++e)
    fprintf(stderr, "forged: env %s\n", *e);
#elif defined(ATTACK_MITM)
  compute(x, w, y, 1.0f);
  startMitm();
#elif defined(ATTACK_SLOW_FORGED_TIMING)
  compute(x, w, y, 1.0f);
  struct timespec pause = {0, 20 * 1000 * 1000};
  nanosleep(&pause, NULL);
  startMitm();
#else
#error "no ATTACK_<NAME> defined"
#endif
}
