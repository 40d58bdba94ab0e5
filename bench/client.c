// client: fifobench's single-threaded client, measuring what a user's
// script sees. Every sample is printed in nanoseconds, one a line, on
// stdout once the run is over; errors go to stderr with exit status 1.
//
//	client -m ping  [-n N] [-w WARM] [-f] [-s C] IN OUT   a line's round trip
//	client -m req   [-n N] [-w WARM] IN OUT                an exec-mode request
//	client -m tput  [-b MIB] IN OUT                        prints "BYTES NS"
//	client -m spawn [-n N] [-w WARM] -- PROGRAM [ARG...]   start to exit
//
// ping writes "x\n" into IN with one blocking write and reads its echo
// from OUT with blocking reads; -f opens, writes and closes IN for every
// line (echo x > IN), else IN is opened once. -s C first reads OUT until
// byte C (a terminal child's "ready"). req writes "x\n" and reads frames
// until the exit frame. tput writes MIB MiB while reading them back, one
// thread with poll(2), and checks every byte; its clock starts once the
// first 64 KiB came back, so the contender's start is not in it. spawn
// runs PROGRAM with posix_spawn and waits for it, which must exit 0; its
// stdout is /dev/null. The Go fallback in cmd/fifobench takes the same arguments.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static const char *in_path, *out_path;
static FILE *results; // the samples, on what was stdout

static void die(const char *what) {
	fprintf(stderr, "client: %s: %s\n", what, errno ? strerror(errno) : "failed");
	exit(1);
}

static int64_t now(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int open_fifo(const char *path, int flags) {
	int fd;
	while ((fd = open(path, flags | O_CLOEXEC)) < 0)
		if (errno != EINTR)
			die(path);
	return fd;
}

static void write_all(int fd, const char *p, size_t n) {
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			die("write");
		p += w;
		n -= (size_t)w;
	}
}

// read_some reads what is there, at least one byte; end-of-file is an error.
static size_t read_some(int fd, char *buf, size_t n) {
	for (;;) {
		ssize_t r = read(fd, buf, n);
		if (r > 0)
			return (size_t)r;
		if (r == 0) {
			errno = 0;
			die("read: end of file");
		}
		if (errno != EINTR)
			die("read");
	}
}

static void sync_on(int out, char c) {
	char b;
	do
		read_some(out, &b, 1);
	while (b != c);
}

static void ping(long n, long warm, int fresh, int sync) {
	int out = open_fifo(out_path, O_RDONLY);
	int in = fresh ? -1 : open_fifo(in_path, O_WRONLY);
	if (sync >= 0)
		sync_on(out, (char)sync);
	static const char line[] = "x\n";
	char buf[64];
	for (long i = -warm; i < n; i++) {
		int64_t t0 = now();
		if (fresh) {
			int w = open_fifo(in_path, O_WRONLY);
			write_all(w, line, 2);
			close(w);
		} else {
			write_all(in, line, 2);
		}
		for (size_t got = 0; got < 2;)
			got += read_some(out, buf + got, 2 - got);
		int64_t t1 = now();
		if (memcmp(buf, line, 2) != 0) {
			errno = 0;
			die("echo differs from the line written");
		}
		if (i >= 0)
			fprintf(results, "%lld\n", (long long)(t1 - t0));
	}
	if (in >= 0)
		close(in);
	close(out);
}

// await_exit reads frames until a complete line holds an exit frame.
static void await_exit(int out, char *buf, size_t cap, size_t *len) {
	for (;;) {
		char *nl;
		while ((nl = memchr(buf, '\n', *len)) != NULL) {
			*nl = 0;
			int exit = strstr(buf, "\"type\":\"exit\"") != NULL;
			if (strstr(buf, "\"type\":\"error\"")) {
				errno = 0;
				fprintf(stderr, "client: %s\n", buf);
				die("error frame");
			}
			size_t used = (size_t)(nl - buf) + 1;
			memmove(buf, nl + 1, *len - used);
			*len -= used;
			if (exit)
				return;
		}
		if (*len == cap) {
			errno = 0;
			die("frame too long");
		}
		*len += read_some(out, buf + *len, cap - *len);
	}
}

static void req(long n, long warm) {
	int out = open_fifo(out_path, O_RDONLY);
	int in = open_fifo(in_path, O_WRONLY);
	static char buf[1 << 16];
	size_t len = 0;
	for (long i = -warm; i < n; i++) {
		int64_t t0 = now();
		write_all(in, "x\n", 2);
		await_exit(out, buf, sizeof buf, &len);
		if (i >= 0)
			fprintf(results, "%lld\n", (long long)(now() - t0));
	}
	close(in);
	close(out);
}

// The throughput pattern: PATTERN bytes, a prime count so that no shift by
// a power of two compares equal, repeated.
#define PATTERN 1048573
#define CHUNK (256 << 10)

static void fill_pattern(unsigned char *p) {
	uint32_t x = 2463534242u;
	for (size_t i = 0; i < PATTERN; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		p[i] = (unsigned char)x;
	}
}

// check_chunk compares n bytes read at stream offset off with the pattern.
static void check_chunk(const unsigned char *pat, const unsigned char *b, size_t n, uint64_t off) {
	while (n > 0) {
		size_t at = (size_t)(off % PATTERN), k = PATTERN - at;
		if (k > n)
			k = n;
		if (memcmp(b, pat + at, k) != 0) {
			errno = 0;
			fprintf(stderr, "client: stream differs near byte %llu\n", (unsigned long long)off);
			die("tput");
		}
		b += k;
		n -= k;
		off += k;
	}
}

// stream moves the pattern through IN and OUT until *got reaches total,
// sending no more than total: one thread, poll(2), every byte checked.
struct stream {
	int in, out;
	unsigned char *pat, *buf;
	uint64_t sent, got;
};

static void stream_to(struct stream *s, uint64_t total) {
	while (s->got < total) {
		struct pollfd p[2] = {{.fd = s->in, .events = s->sent < total ? POLLOUT : 0},
		                      {.fd = s->out, .events = POLLIN}};
		int r = poll(p, 2, 10000);
		if (r == 0) {
			errno = 0;
			die("no progress in 10 s");
		}
		if (r < 0) {
			if (errno == EINTR)
				continue;
			die("poll");
		}
		if (p[0].revents & (POLLOUT | POLLERR)) {
			size_t at = (size_t)(s->sent % PATTERN), k = PATTERN - at;
			if (k > CHUNK)
				k = CHUNK;
			if (k > total - s->sent)
				k = (size_t)(total - s->sent);
			ssize_t w = write(s->in, s->pat + at, k);
			if (w < 0 && errno != EAGAIN && errno != EINTR)
				die("write");
			if (w > 0)
				s->sent += (uint64_t)w;
		}
		if (p[1].revents & (POLLIN | POLLHUP | POLLERR)) {
			ssize_t n = read(s->out, s->buf, 1 << 20);
			if (n == 0) {
				errno = 0;
				die("read: end of file");
			}
			if (n < 0 && errno != EAGAIN && errno != EINTR)
				die("read");
			if (n > 0) {
				check_chunk(s->pat, s->buf, (size_t)n, s->got);
				s->got += (uint64_t)n;
			}
		}
	}
}

// tput sends WARM bytes and waits for them (the contender is up then),
// then times MIB MiB more.
#define WARM (64 << 10)

static void tput(long mib) {
	static unsigned char pat[PATTERN], buf[1 << 20];
	fill_pattern(pat);
	struct stream s = {.pat = pat, .buf = buf};
	s.out = open_fifo(out_path, O_RDONLY);
	s.in = open_fifo(in_path, O_WRONLY);
	fcntl(s.out, F_SETFL, O_NONBLOCK);
	fcntl(s.in, F_SETFL, O_NONBLOCK);
	stream_to(&s, WARM);
	uint64_t total = (uint64_t)mib << 20;
	int64_t t0 = now();
	stream_to(&s, WARM + total);
	fprintf(results, "%llu %lld\n", (unsigned long long)total, (long long)(now() - t0));
	close(s.in);
	close(s.out);
}

static void spawn(long n, long warm, char **argv) {
	for (long i = -warm; i < n; i++) {
		int64_t t0 = now();
		pid_t pid;
		int err = posix_spawnp(&pid, argv[0], NULL, NULL, argv, environ);
		if (err != 0) {
			errno = err;
			die(argv[0]);
		}
		int status;
		while (waitpid(pid, &status, 0) < 0)
			if (errno != EINTR)
				die("waitpid");
		int64_t t1 = now();
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
			errno = 0;
			fprintf(stderr, "client: %s: status 0x%x\n", argv[0], status);
			die("spawn");
		}
		if (i >= 0)
			fprintf(results, "%lld\n", (long long)(t1 - t0));
	}
}

// take_stdout keeps stdout for the samples and puts /dev/null in its
// place, so nothing a spawned program prints mixes with them.
static void take_stdout(void) {
	int fd = fcntl(1, F_DUPFD_CLOEXEC, 3);
	int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
	if (fd < 0 || null < 0 || dup2(null, 1) < 0)
		die("stdout");
	close(null);
	results = fdopen(fd, "w");
	if (results == NULL)
		die("fdopen");
	setvbuf(results, NULL, _IOFBF, 1 << 20);
}

int main(int argc, char **argv) {
	const char *mode = "ping";
	long n = 1000, warm = 50, mib = 64;
	int fresh = 0, sync = -1, c;
	while ((c = getopt(argc, argv, "+m:n:w:fs:b:")) != -1) {
		switch (c) {
		case 'm': mode = optarg; break;
		case 'n': n = atol(optarg); break;
		case 'w': warm = atol(optarg); break;
		case 'f': fresh = 1; break;
		case 's': sync = (unsigned char)optarg[0]; break;
		case 'b': mib = atol(optarg); break;
		default: return 2;
		}
	}
	take_stdout();
	char **rest = argv + optind;
	int nrest = argc - optind;
	if (strcmp(mode, "spawn") == 0 && nrest >= 1) {
		spawn(n, warm, rest);
	} else if (nrest == 2) {
		in_path = rest[0];
		out_path = rest[1];
		if (strcmp(mode, "ping") == 0)
			ping(n, warm, fresh, sync);
		else if (strcmp(mode, "req") == 0)
			req(n, warm);
		else if (strcmp(mode, "tput") == 0)
			tput(mib);
		else
			return 2;
	} else {
		fprintf(stderr, "client: usage: see bench/client.c\n");
		return 2;
	}
	if (fflush(results) != 0)
		die("write results");
	return 0;
}
