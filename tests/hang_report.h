/* What a hung child was doing, printed before a test kills it: each
 * thread's name, state (R running, S sleeping, D in the kernel
 * uninterruptibly), the kernel function it waits in (wchan) and its
 * syscall, then every thread's stack from gdb where gdb is installed and
 * may attach (root, or ptrace allowed). A hang seen once in a suite loop
 * beside CI leaves nothing else behind: the case folder is reused by the
 * next run. Output goes to out, whole lines, at most a few KiB; gdb runs
 * under `timeout 20` so the report itself cannot hang. */
#ifndef CC_TEST_HANG_REPORT_H
#define CC_TEST_HANG_REPORT_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

static void hang_read_line(const char *path, char *buf, size_t n)
{
    buf[0] = 0;
    FILE *f = fopen(path, "r");
    if (!f) return;
    if (!fgets(buf, (int)n, f)) buf[0] = 0;
    fclose(f);
    buf[strcspn(buf, "\n")] = 0;
}

static inline void hang_report(pid_t pid, FILE *out)
{
    char dir[64], path[400], comm[64], stat[512], wchan[128], sc[256];
    snprintf(dir, sizeof dir, "/proc/%d/task", (int)pid);
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(out, "hang report: pid %d: no %s\n", (int)pid, dir);
        return;
    }
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (e->d_name[0] == '.') continue;
        snprintf(path, sizeof path, "%s/%s/comm", dir, e->d_name);
        hang_read_line(path, comm, sizeof comm);
        snprintf(path, sizeof path, "%s/%s/stat", dir, e->d_name);
        hang_read_line(path, stat, sizeof stat);
        const char *st = strrchr(stat, ')'); /* the state follows the (comm) field */
        snprintf(path, sizeof path, "%s/%s/wchan", dir, e->d_name);
        hang_read_line(path, wchan, sizeof wchan);
        snprintf(path, sizeof path, "%s/%s/syscall", dir, e->d_name);
        hang_read_line(path, sc, sizeof sc);
        fprintf(out, "hang report: pid %d tid %s (%s) state %c wchan %s syscall %s\n", (int)pid, e->d_name,
                comm, st && st[1] && st[2] ? st[2] : '?', wchan[0] ? wchan : "-", sc[0] ? sc : "-");
    }
    closedir(d);
    fflush(out);
    char cmd[256];
    snprintf(cmd, sizeof cmd,
             "command -v gdb >/dev/null 2>&1 && timeout 20 gdb -p %d -batch -nx -q "
             "-ex 'thread apply all bt 30' 2>&1 | grep -E '^(Thread|#)' | head -120",
             (int)pid);
    FILE *p = popen(cmd, "r");
    if (!p) return;
    char line[512];
    while (fgets(line, sizeof line, p)) fprintf(out, "hang report: %s", line);
    pclose(p);
    fflush(out);
}

#endif
