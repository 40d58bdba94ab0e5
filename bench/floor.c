// floor: the least any bridge between two FIFOs and a child on pipes can
// do, as fifobench's floor contender.
//
//	floor IN OUT PROGRAM [ARG...]
//
// One thread, one ppoll(2) over both directions and one splice(2) per
// wake-up: IN -> the child's stdin pipe, the child's stdout pipe -> OUT.
// IN and OUT are held O_RDWR, so a writer leaving IN is not end-of-file
// and OUT can be opened before its reader comes; every FIFO and pipe gets
// 1 MiB (F_SETPIPE_SZ), as fifobridge asks. SIGTERM or SIGINT stop it: the
// child gets SIGTERM and is waited for. It exits with the child's status
// (128+N for signal N).
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#define PIPE_SIZE (1 << 20)

static volatile sig_atomic_t stopping;

static void on_stop(int sig) { (void)sig; stopping = 1; }

static void die(const char *what) {
	fprintf(stderr, "floor: %s: %s\n", what, strerror(errno));
	exit(125);
}

// A direction moves bytes from src to dst. When a splice said EAGAIN
// although src was readable, dst is full: wait for dst instead of src.
struct direction {
	int src, dst;
	int dst_full;
};

// pump runs one splice for d after poll said it may go on. It returns 0 to
// go on, 1 at end-of-file of src, -1 on an error.
static int pump(struct direction *d, short revents) {
	if (d->dst_full) { // dst took bytes again: wait for src next time
		if (revents & POLLERR)
			return -1;
		d->dst_full = 0;
		return 0;
	}
	ssize_t n = splice(d->src, NULL, d->dst, NULL, PIPE_SIZE,
	                   SPLICE_F_NONBLOCK | SPLICE_F_MOVE);
	if (n > 0)
		return 0;
	if (n == 0)
		return 1;
	if (errno == EAGAIN) {
		d->dst_full = 1;
		return 0;
	}
	if (errno == EINTR)
		return 0;
	return -1;
}

static void grow(int fd) { fcntl(fd, F_SETPIPE_SZ, PIPE_SIZE); }

// start_child starts argv on two new pipes and returns its pid; *to_child
// and *from_child are the bridge's ends, non-blocking.
static pid_t start_child(char **argv, const sigset_t *mask, int *to_child, int *from_child) {
	int in[2], out[2];
	if (pipe2(in, O_CLOEXEC) < 0 || pipe2(out, O_CLOEXEC) < 0)
		die("pipe");
	grow(in[1]);
	grow(out[0]);
	pid_t pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		signal(SIGPIPE, SIG_DFL);
		sigprocmask(SIG_SETMASK, mask, NULL);
		if (dup2(in[0], 0) < 0 || dup2(out[1], 1) < 0)
			_exit(126);
		execvp(argv[0], argv);
		_exit(errno == ENOENT ? 127 : 126);
	}
	close(in[0]);
	close(out[1]);
	fcntl(in[1], F_SETFL, O_NONBLOCK);
	fcntl(out[0], F_SETFL, O_NONBLOCK);
	*to_child = in[1];
	*from_child = out[0];
	return pid;
}

// bridge runs the poll loop until the child's stdout ends, an error, or a
// stop signal.
static void bridge(struct direction d[2], const sigset_t *wait_mask) {
	while (!stopping) {
		struct pollfd p[2];
		for (int i = 0; i < 2; i++) {
			p[i].fd = d[i].dst_full ? d[i].dst : d[i].src;
			p[i].events = d[i].dst_full ? POLLOUT : POLLIN;
		}
		if (ppoll(p, 2, NULL, wait_mask) < 0) {
			if (errno == EINTR)
				continue;
			die("ppoll");
		}
		for (int i = 0; i < 2; i++) {
			if (p[i].revents == 0)
				continue;
			int r = pump(&d[i], p[i].revents);
			if (r != 0)
				return;
		}
	}
}

int main(int argc, char **argv) {
	if (argc < 4) {
		fprintf(stderr, "usage: floor IN OUT PROGRAM [ARG...]\n");
		return 125;
	}
	int in = open(argv[1], O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (in < 0)
		die(argv[1]);
	int out = open(argv[2], O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (out < 0)
		die(argv[2]);
	grow(in);
	grow(out);

	// Stop signals are blocked except inside ppoll, so none is lost
	// between a check of stopping and the wait.
	struct sigaction sa = {.sa_handler = on_stop};
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	sigset_t stops, wait_mask;
	sigemptyset(&stops);
	sigaddset(&stops, SIGTERM);
	sigaddset(&stops, SIGINT);
	sigprocmask(SIG_BLOCK, &stops, &wait_mask);

	struct direction d[2] = {{.src = in}, {.dst = out}};
	pid_t pid = start_child(argv + 3, &wait_mask, &d[0].dst, &d[1].src);
	bridge(d, &wait_mask);

	close(d[0].dst); // the child's stdin ends
	if (stopping)
		kill(pid, SIGTERM);
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			die("waitpid");
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}
