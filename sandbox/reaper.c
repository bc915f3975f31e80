/* The last link of every local sandbox chain: limits, the uid drop, the program, its rusage.
 *
 * Usage: reaper FD [--netns-fd=N] [--rlimit=RES:SOFT[:HARD]]... [--uid=UID [--sweep]] -- PROGRAM [ARGS...]
 *
 * 0. With --netns-fd, joins that network namespace first (the slot's own empty one, made once by the
 *    host: cheaper than a new namespace per run) and closes the fd; failing that, it stops.
 * 1. Sets each rlimit (RES is the number of RLIMIT_*; HARD defaults to SOFT: RLIMIT_CPU gets a hard
 *    limit a second above the soft one, so SIGXCPU says "CPU budget spent"), then, with --uid, drops
 *    root for good: no supplementary groups, gid = uid = UID, an empty capability bounding set and
 *    no_new_privs. Doing this here instead of `prlimit` + `setpriv` saves two exec()s (~2 ms) per run.
 * 2. Runs PROGRAM as its child and, once it ends, writes "utime_s stime_s maxrss_kb" to FD (a pipe
 *    the host passed down; the program does not inherit it). Inside bwrap the program's parent would
 *    otherwise be bwrap's pid 1, which the outer bwrap never reaps, so the host's wait4() would see
 *    neither its CPU time nor its peak memory.
 * 3. With --sweep (only for a leased uid that belongs to this run alone) it is a child subreaper:
 *    after the program it kills every other process of its uid and reaps them all, so no daemon
 *    survives and no zombie waits for the host's init, which may be slow to reap (zombies count
 *    against RLIMIT_NPROC and would starve the slot's next run). Never as root: kill(-1) would
 *    then reach every process on the machine.
 * Exits like the program did (re-raising its signal). Built by sandbox/envs.py with the system cc.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <linux/capability.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef CAP_LAST_CAP_GUESS
#define CAP_LAST_CAP_GUESS 63
#endif

static int report_fd = -1;

/* Set-up failures go to the report pipe, which the program can never write to, so the host tells
 * a sandbox error from a program that merely prints the same words and exits 126. */
static int fail(const char *what) {
    char line[160];
    int n = snprintf(line, sizeof line, "error %s: %s\n", what, strerror(errno));
    if (report_fd >= 0 && write(report_fd, line, n) < 0) {}
    fprintf(stderr, "reaper: %s: %s\n", what, strerror(errno));
    return 126;
}

int main(int argc, char **argv) {
    if (argc < 4) return 126;
    int fd = atoi(argv[1]);
    report_fd = fd;
    long uid = -1;
    int sweep = 0, i = 2;
    for (; i < argc && strcmp(argv[i], "--") != 0; i++) {
        if (strncmp(argv[i], "--rlimit=", 9) == 0) {
            int res;
            unsigned long long soft, hard;
            int got = sscanf(argv[i] + 9, "%d:%llu:%llu", &res, &soft, &hard);
            if (got == 2) hard = soft;
            else if (got != 3) return 126;
            struct rlimit rl = {(rlim_t)soft, (rlim_t)hard};
            if (setrlimit(res, &rl) != 0) return fail("setrlimit");
        } else if (strncmp(argv[i], "--netns-fd=", 11) == 0) {
            int ns = atoi(argv[i] + 11);
            if (setns(ns, CLONE_NEWNET) != 0) return fail("setns");
            close(ns);
        } else if (strncmp(argv[i], "--uid=", 6) == 0) {
            uid = atol(argv[i] + 6);
        } else if (strcmp(argv[i], "--sweep") == 0) {
            sweep = 1;
        } else {
            fprintf(stderr, "reaper: unknown option %s\n", argv[i]);
            return 126;
        }
    }
    if (i + 1 >= argc) return 126;
    char **program = argv + i + 1;
    if (uid > 0) {
        if (setgroups(0, NULL) != 0) return fail("setgroups");
        if (setresgid((gid_t)uid, (gid_t)uid, (gid_t)uid) != 0) return fail("setresgid");
        for (int cap = 0; cap <= CAP_LAST_CAP_GUESS; cap++) {
            if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno == EINVAL) break;
        }
        if (setresuid((uid_t)uid, (uid_t)uid, (uid_t)uid) != 0) return fail("setresuid");
        /* Leaving root cleared the permitted and effective sets; clear the inheritable one too. */
        struct __user_cap_header_struct head = {_LINUX_CAPABILITY_VERSION_3, 0};
        struct __user_cap_data_struct data[2];
        memset(data, 0, sizeof data);
        if (syscall(SYS_capset, &head, data) != 0) return fail("capset");
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return fail("no_new_privs");
    }
    sweep = sweep && uid > 0 && getuid() == (uid_t)uid && geteuid() == (uid_t)uid;
    fcntl(fd, F_SETFD, FD_CLOEXEC);
    if (sweep) prctl(PR_SET_CHILD_SUBREAPER, 1);
    pid_t pid = fork();
    if (pid < 0) return fail("fork");
    if (pid == 0) {
        execvp(program[0], program);
        fprintf(stderr, "reaper: cannot execute %s: %s\n", program[0], strerror(errno));
        _exit(127);
    }
    signal(SIGTERM, SIG_IGN);  /* only the host's SIGKILL of the whole sandbox ends the helper */
    signal(SIGINT, SIG_IGN);
    int status = 0;
    struct rusage ru;
    while (wait4(pid, &status, 0, &ru) < 0) {
        if (errno != EINTR) return 126;
    }
    char line[96];
    int n = snprintf(line, sizeof line, "%ld.%06ld %ld.%06ld %ld\n", (long)ru.ru_utime.tv_sec,
                     (long)ru.ru_utime.tv_usec, (long)ru.ru_stime.tv_sec, (long)ru.ru_stime.tv_usec,
                     ru.ru_maxrss);
    if (write(fd, line, n) < 0) {}
    /* kill(-1) reaches every process this uid may signal except ourselves; a process with SIGKILL
     * pending cannot fork, so repeating until no child is left ends. */
    while (sweep) {
        kill(-1, SIGKILL);
        if (wait(NULL) < 0 && errno == ECHILD) break;
    }
    if (WIFSIGNALED(status)) {
        signal(WTERMSIG(status), SIG_DFL);
        raise(WTERMSIG(status));
        return 128 + WTERMSIG(status);
    }
    return WEXITSTATUS(status);
}
