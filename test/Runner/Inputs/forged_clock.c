/* A candidate that computes y = x @ w + 1 correctly but slowly (20 ms a call) and forges the timing of its own
 * timed phase (test/Runner/timing-clock-cpu.test). On its first call it puts a thread between the judge and the
 * executor on the channel (descriptor 3) that follows the protocol (it echoes each command's "seq") and answers
 * the candidate's "time" command with samples of 0.05 ms:
 *   -DMODE_IMMEDIATE  at once, without running anything (the phase is short, the claims longer than it)
 *   -DMODE_AFTER      after the executor really timed the 20 ms calls (the phase is long, the claims short)
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define M 64
#define K 64
#define N 64

typedef struct {
  float *allocated, *aligned;
  int64_t offset, sizes[2], strides[2];
} Desc2;

static int realChannel = -1, executorSide = -1;

static void writeAll(int fd, const char *text, size_t length) {
  while (length > 0) {
    ssize_t n = write(fd, text, length);
    if (n <= 0)
      return;
    text += n;
    length -= (size_t)n;
  }
}

static size_t readLine(int fd, char *buf, size_t capacity) {
  size_t n = 0;
  char c;
  while (n + 1 < capacity) {
    if (read(fd, &c, 1) <= 0)
      return 0;
    if (c == '\n')
      break;
    buf[n++] = c;
  }
  buf[n] = '\0';
  return n + 1;
}

static long field(const char *command, const char *key) {
  const char *at = strstr(command, key);
  return at ? strtol(at + strlen(key), NULL, 10) : 0;
}

static void forgedTiming(const char *command) {
  static char reply[1 << 16];
  long reps = field(command, "\"reps\":"), warmup = field(command, "\"warmup\":"), seq = field(command, "\"seq\":");
  size_t at = (size_t)snprintf(reply, sizeof(reply), "{\"ok\":true,\"seq\":%ld,\"timing\":{\"clock\":\"forged\","
                               "\"median_ms\":0.05,\"min_ms\":0.05,\"max_ms\":0.05,\"p10_ms\":0.05,\"p90_ms\":0.05,"
                               "\"samples_ms\":[", seq);
  for (long i = 0; i < reps; ++i)
    at += (size_t)snprintf(reply + at, sizeof(reply) - at, "%s0.05", i ? "," : "");
  at += (size_t)snprintf(reply + at, sizeof(reply) - at, "],\"warmup_ms\":[");
  for (long i = 0; i < warmup; ++i)
    at += (size_t)snprintf(reply + at, sizeof(reply) - at, "%s0.05", i ? "," : "");
  at += (size_t)snprintf(reply + at, sizeof(reply) - at, "]}}\n");
  writeAll(realChannel, reply, at);
}

static void *between(void *unused) {
  (void)unused;
  static char command[1 << 20], answer[1 << 20];
  if (readLine(executorSide, answer, sizeof(answer))) { /* the reply to the run in flight */
    writeAll(realChannel, answer, strlen(answer));
    writeAll(realChannel, "\n", 1);
  }
  while (readLine(realChannel, command, sizeof(command))) {
    int isTime = strstr(command, "\"op\":\"time\"") != NULL;
#ifdef MODE_IMMEDIATE
    if (isTime) {
      forgedTiming(command);
      continue;
    }
#endif
    writeAll(executorSide, command, strlen(command));
    writeAll(executorSide, "\n", 1);
    if (!readLine(executorSide, answer, sizeof(answer)))
      break;
    if (isTime) {
      forgedTiming(command);
      continue;
    }
    writeAll(realChannel, answer, strlen(answer));
    writeAll(realChannel, "\n", 1);
  }
  _exit(0);
  return NULL;
}

static void startBetween(void) {
  static int started;
  int pair[2];
  if (started++)
    return;
  realChannel = fcntl(3, F_DUPFD_CLOEXEC, 100);
  if (realChannel < 0 || socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0 || dup2(pair[0], 3) != 3)
    return;
  close(pair[0]);
  executorSide = pair[1];
  pthread_t thread;
  pthread_create(&thread, NULL, between, NULL);
  pthread_detach(thread);
}

void _mlir_ciface_kernel(Desc2 *x, Desc2 *w, Desc2 *y) {
  const float *a = x->aligned + x->offset, *b = w->aligned + w->offset;
  float *c = y->aligned + y->offset;
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      float acc = 1.0f;
      for (int k = 0; k < K; ++k)
        acc += a[i * K + k] * b[k * N + j];
      c[i * N + j] = acc;
    }
  struct timespec pause = {0, 20 * 1000 * 1000};
  nanosleep(&pause, NULL);
  startBetween();
}
