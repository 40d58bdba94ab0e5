// ttyfloor: the least a bridge between two FIFOs and a child on a
// pseudo-terminal can do, as fifobench's floor for fifobridge -tty.
//
//	ttyfloor IN OUT PROGRAM [ARG...]
//
// One thread and one ppoll(2) over both directions: bytes read from IN are
// written to the terminal's master, bytes read from the master are written
// to OUT (a pseudo-terminal takes no splice). The child leads a new session
// with the slave as its controlling terminal and as fds 0, 1 and 2. IN and
// OUT are held O_RDWR, with 1 MiB buffers, as floor.c holds them. Writes
// are blocking: the benchmark never fills a buffer. SIGTERM or SIGINT stop
// it: the child gets SIGHUP and SIGTERM and is waited for.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t stopping;

static void on_stop(int sig) { (void)sig; stopping = 1; }

static void die(const char *what) {
	fprintf(stderr, "ttyfloor: %s: %s\n", what, strerror(errno));
	exit(125);
}

// open_fifo opens a FIFO read-write with a 1 MiB buffer.
static int open_fifo(const char *path) {
	int fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		die(path);
	fcntl(fd, F_SETPIPE_SZ, 1 << 20);
	return fd;
}

// start_child starts argv on a new terminal and returns its pid; *master
// is the terminal's master, non-blocking.
static pid_t start_child(char **argv, const sigset_t *mask, int *master) {
	int m = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (m < 0 || grantpt(m) < 0 || unlockpt(m) < 0)
		die("posix_openpt");
	char *slave = ptsname(m);
	if (slave == NULL)
		die("ptsname");
	pid_t pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		signal(SIGPIPE, SIG_DFL);
		sigprocmask(SIG_SETMASK, mask, NULL);
		setsid();
		int s = open(slave, O_RDWR);
		if (s < 0 || ioctl(s, TIOCSCTTY, 0) < 0)
			_exit(126);
		if (dup2(s, 0) < 0 || dup2(s, 1) < 0 || dup2(s, 2) < 0)
			_exit(126);
		execvp(argv[0], argv);
		_exit(errno == ENOENT ? 127 : 126);
	}
	fcntl(m, F_SETFL, O_NONBLOCK);
	*master = m;
	return pid;
}

// copy moves what one read of src gives to dst. It returns 0 to go on, 1
// when src has ended (the terminal has nobody left: EIO).
static int copy(int src, int dst) {
	static char buf[1 << 16];
	ssize_t n = read(src, buf, sizeof buf);
	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : 1;
	if (n == 0)
		return 1;
	for (ssize_t off = 0; off < n;) {
		ssize_t w = write(dst, buf + off, n - off);
		if (w < 0 && errno != EINTR && errno != EAGAIN)
			return 1;
		if (w > 0)
			off += w;
	}
	return 0;
}

int main(int argc, char **argv) {
	if (argc < 4) {
		fprintf(stderr, "usage: ttyfloor IN OUT PROGRAM [ARG...]\n");
		return 125;
	}
	int in = open_fifo(argv[1]);
	int out = open_fifo(argv[2]);
	struct sigaction sa = {.sa_handler = on_stop};
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	sigset_t stops, wait_mask;
	sigemptyset(&stops);
	sigaddset(&stops, SIGTERM);
	sigaddset(&stops, SIGINT);
	sigprocmask(SIG_BLOCK, &stops, &wait_mask);
	fcntl(in, F_SETFL, O_NONBLOCK);

	int master;
	pid_t pid = start_child(argv + 3, &wait_mask, &master);
	while (!stopping) {
		struct pollfd p[2] = {{.fd = in, .events = POLLIN}, {.fd = master, .events = POLLIN}};
		if (ppoll(p, 2, NULL, &wait_mask) < 0) {
			if (errno == EINTR)
				continue;
			die("ppoll");
		}
		if (p[0].revents && copy(in, master))
			break;
		if (p[1].revents && copy(master, out))
			break;
	}
	if (stopping)
		kill(pid, SIGTERM);
	close(master); // the terminal hangs up
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			die("waitpid");
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}
