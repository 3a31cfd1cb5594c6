// course_sandbox: runs one student program with no network, a read-only view of the system,
// write access to its own scratch folder only, and no sight of other processes.
//
//   course_sandbox --probe
//       prints one JSON line: what this machine allows (the grader's report shows it)
//   course_sandbox [--read PATH]... [--write DIR]... [--fsize-mib N] [--profiler] -- PROGRAM ARGS...
//
// --profiler: for Nsight Compute run inside with the program it profiles. The two talk over TCP
// on 127.0.0.1, so the network namespace's own loopback is brought up (it reaches nothing
// outside the namespace), and /tmp and /dev/shm, private as always, get room for its files.
//
// Made of what Linux gives an unprivileged process, no daemon: a user namespace (needed for the
// others without root), a network namespace (no interface but a down loopback), a mount and a
// PID namespace with their own /proc (other processes, the grader's command line among them,
// are out of sight), Landlock (file-system access by path; signals and abstract Unix sockets
// scoped to the sandbox, ABI 6+), no new privileges, no core files, a file-size limit.
// What CUDA needs inside, as probed on an H100: /dev read-write with ioctl, /proc writable, /sys
// and the system's libraries readable.
//
// The process tree: this launcher (outside, in the grader's process group) -> init of the new
// PID namespace (mounts /proc, applies Landlock, reaps) -> the program. The launcher ends the
// way the program ended, with the same exit status or the same signal, so the grader's
// classification (crashed with SIGSEGV, exit status 1) is unchanged. Everything is in one
// process group: the grader's time-out kills the whole tree, and when init dies the kernel ends
// whatever the program left behind in the namespace.

#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

namespace {

// Landlock's interface (linux/landlock.h), spelled out: the build machine's headers may be
// older than the kernel the grader runs on.
constexpr long kCreateRuleset = 444;
constexpr long kAddRule = 445;
constexpr long kRestrictSelf = 446;
constexpr uint32_t kCreateRulesetVersion = 1u << 0;
constexpr int kRulePathBeneath = 1;

constexpr uint64_t kExecute = 1ull << 0, kWriteFile = 1ull << 1, kReadFile = 1ull << 2,
                   kReadDir = 1ull << 3, kRemoveDir = 1ull << 4, kRemoveFile = 1ull << 5,
                   kMakeChar = 1ull << 6, kMakeDir = 1ull << 7, kMakeReg = 1ull << 8,
                   kMakeSock = 1ull << 9, kMakeFifo = 1ull << 10, kMakeBlock = 1ull << 11,
                   kMakeSym = 1ull << 12, kRefer = 1ull << 13, kTruncate = 1ull << 14,
                   kIoctlDev = 1ull << 15;
constexpr uint64_t kNetBindTcp = 1ull << 0, kNetConnectTcp = 1ull << 1;
constexpr uint64_t kScopeAbstractUnixSocket = 1ull << 0, kScopeSignal = 1ull << 1;

struct RulesetAttr {
  uint64_t handled_access_fs;
  uint64_t handled_access_net;
  uint64_t scoped;
};

struct __attribute__((packed)) PathBeneathAttr {
  uint64_t allowed_access;
  int32_t parent_fd;
};

constexpr uint64_t kFileRights = kExecute | kWriteFile | kReadFile | kTruncate | kIoctlDev;
constexpr uint64_t kRead = kExecute | kReadFile | kReadDir;
constexpr uint64_t kReadWriteDevices = kRead | kWriteFile | kIoctlDev;
constexpr uint64_t kEverything = kExecute | kWriteFile | kReadFile | kReadDir | kRemoveDir |
                                 kRemoveFile | kMakeChar | kMakeDir | kMakeReg | kMakeSock |
                                 kMakeFifo | kMakeBlock | kMakeSym | kRefer | kTruncate |
                                 kIoctlDev;

// What each ABI version can restrict; rights a kernel does not know must not be asked for.
uint64_t fs_rights_of(int abi) {
  uint64_t rights = kEverything;
  if (abi < 2) rights &= ~kRefer;
  if (abi < 3) rights &= ~kTruncate;
  if (abi < 5) rights &= ~kIoctlDev;
  return rights;
}

// The system's read-only part: libraries, the dynamic loader's configuration, the files a C
// library reads for names and time. Not /etc as a whole (shadow, keys), not /home, /root,
// /opt, /srv, /var or /tmp.
const char* const kSystemReadable[] = {
    "/usr", "/lib", "/lib32", "/lib64", "/libx32", "/bin", "/sbin",
    "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime",
    "/etc/nsswitch.conf", "/etc/passwd", "/etc/group", "/etc/alternatives",
    "/sys",
};

struct Options {
  std::vector<std::string> read;
  std::vector<std::string> write;
  long fsize_mib = 4096;
  bool profiler = false;
  std::vector<char*> program;
};

[[noreturn]] void fail(const char* what) {
  std::fprintf(stderr, "course_sandbox: %s: %s\n", what, std::strerror(errno));
  std::_Exit(125);
}

int landlock_abi() {
  long abi = syscall(kCreateRuleset, nullptr, 0, kCreateRulesetVersion);
  return abi < 0 ? 0 : static_cast<int>(abi);
}

bool write_file(const char* path, const std::string& text) {
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool ok = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  close(fd);
  return ok;
}

// The user namespace maps the caller's own ids to themselves: files keep their owners, and
// root outside stays uid 0 inside, without any capability over the machine's files.
bool enter_user_namespace(int extra_flags, std::string* why) {
  uid_t uid = getuid();
  gid_t gid = getgid();
  if (unshare(CLONE_NEWUSER | extra_flags) != 0) {
    *why = std::string("unshare: ") + std::strerror(errno);
    return false;
  }
  write_file("/proc/self/setgroups", "deny");
  if (!write_file("/proc/self/uid_map", std::to_string(uid) + " " + std::to_string(uid) + " 1") ||
      !write_file("/proc/self/gid_map", std::to_string(gid) + " " + std::to_string(gid) + " 1")) {
    *why = std::string("id maps: ") + std::strerror(errno);
    return false;
  }
  return true;
}

bool add_path(int ruleset, const std::string& path, uint64_t rights, uint64_t handled,
              bool optional = false) {
  int fd = open(path.c_str(), O_PATH | O_CLOEXEC);
  if (fd < 0) return optional && errno == ENOENT;  // a system folder this machine lacks
  struct stat st {};
  if (fstat(fd, &st) == 0 && !S_ISDIR(st.st_mode)) rights &= kFileRights;
  PathBeneathAttr attr{rights & handled, fd};
  long rc = syscall(kAddRule, ruleset, kRulePathBeneath, &attr, 0);
  int saved = errno;
  close(fd);
  errno = saved;
  return rc == 0;
}

// Landlock over the file system (and TCP where no network namespace could be had); with ABI 6
// signals and abstract Unix sockets stay within the sandbox too.
void restrict_self(const Options& options, bool network_isolated) {
  int abi = landlock_abi();
  if (abi < 1) {
    errno = ENOSYS;
    fail("Landlock is not available");
  }
  uint64_t handled = fs_rights_of(abi);
  RulesetAttr attr{handled, 0, 0};
  size_t size = sizeof(uint64_t);
  if (!network_isolated && abi >= 4) {
    attr.handled_access_net = kNetBindTcp | kNetConnectTcp;
    size = 2 * sizeof(uint64_t);
  }
  if (abi >= 6) {
    attr.scoped = kScopeAbstractUnixSocket | kScopeSignal;
    size = sizeof(RulesetAttr);
  }
  int ruleset = static_cast<int>(syscall(kCreateRuleset, &attr, size, 0));
  if (ruleset < 0) fail("landlock_create_ruleset");
  for (const char* path : kSystemReadable)
    if (!add_path(ruleset, path, kRead, handled, true)) fail(path);
  // The GPU's device files and /proc are written to by the driver: CUDA fails to start
  // (cudaErrorOperatingSystem) unless a file under /proc may be opened for writing with
  // truncation (probed on an H200: write alone is not enough). This /proc is the sandbox's
  // own where a PID namespace could be had.
  if (!add_path(ruleset, "/dev", kReadWriteDevices, handled)) fail("/dev");
  if (!add_path(ruleset, "/proc", kRead | kWriteFile | kTruncate, handled)) fail("/proc");
  for (const std::string& path : options.read)
    if (!add_path(ruleset, path, kRead, handled)) fail(path.c_str());
  for (const std::string& path : options.write)
    if (!add_path(ruleset, path, kEverything, handled)) fail(path.c_str());
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) fail("no_new_privs");
  if (syscall(kRestrictSelf, ruleset, 0) != 0) fail("landlock_restrict_self");
  close(ruleset);
}

void limit_resources(const Options& options) {
  rlimit none{0, 0};
  setrlimit(RLIMIT_CORE, &none);
  rlim_t bytes = static_cast<rlim_t>(options.fsize_mib) << 20;
  rlimit fsize{bytes, bytes};
  setrlimit(RLIMIT_FSIZE, &fsize);
}

// Ends this process the way `status` says a child ended.
[[noreturn]] void end_like(int status) {
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    std::signal(sig, SIG_DFL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, sig);
    sigprocmask(SIG_UNBLOCK, &set, nullptr);
    raise(sig);
  }
  std::_Exit(WIFEXITED(status) ? WEXITSTATUS(status) : 125);
}

int wait_for(pid_t child) {
  int status = 0;
  while (waitpid(child, &status, 0) < 0)
    if (errno != EINTR) fail("waitpid");
  return status;
}

// Unix sockets named in the file system (a container engine's, a desktop's, another user's
// tmux) can be connected to whatever Landlock says of files: the usual folders of sockets get
// an empty file system of their own in this mount namespace. The program's scratch folder is
// A folder holding a path the grader gives (a scratch folder under /tmp) keeps its contents.
bool holds_a_given_path(const std::string& folder, const Options& options) {
  for (const auto* list : {&options.read, &options.write})
    for (const std::string& path : *list)
      if (path == folder || path.rfind(folder + "/", 0) == 0) return true;
  return false;
}

void hide_socket_folders(const Options& options) {
  for (const char* folder : {"/run", "/var/run", "/tmp", "/var/tmp", "/dev/shm"}) {
    struct stat st {};
    if (lstat(folder, &st) != 0 || !S_ISDIR(st.st_mode)) continue;  // /var/run is a link
    if (holds_a_given_path(folder, options)) continue;
    const bool roomy = options.profiler && (std::strcmp(folder, "/tmp") == 0 ||
                                            std::strcmp(folder, "/dev/shm") == 0);
    mount("tmpfs", folder, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
          roomy ? "size=512m,mode=1777" : "size=1m,mode=0755");
  }
}

// The new network namespace's loopback, up (it starts down): only processes inside the
// namespace can reach it.
void bring_loopback_up() {
  int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) fail("socket for the loopback");
  struct ifreq request {};
  std::strncpy(request.ifr_name, "lo", IFNAMSIZ - 1);
  if (ioctl(fd, SIOCGIFFLAGS, &request) != 0) fail("read the loopback's flags");
  request.ifr_flags = static_cast<short>(request.ifr_flags | IFF_UP);
  if (ioctl(fd, SIOCSIFFLAGS, &request) != 0) fail("bring the loopback up");
  close(fd);
}

// Init of the PID namespace: forwards termination to the program, reaps orphans, and reports
// the program's end through `report` (init cannot die of a signal it sends itself).
[[noreturn]] void be_init(const Options& options, bool network_isolated, int report) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) fail("private mounts");
  if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) != 0)
    fail("mount /proc");
  hide_socket_folders(options);
  if (options.profiler) bring_loopback_up();
  restrict_self(options, network_isolated);
  limit_resources(options);
  pid_t program = fork();
  if (program < 0) fail("fork");
  if (program == 0) {
    close(report);
    execvp(options.program[0], options.program.data());
    fail(options.program[0]);
  }
  for (int sig : {SIGTERM, SIGINT, SIGHUP}) std::signal(sig, [](int) {});
  int status = 0;
  for (;;) {
    pid_t ended = waitpid(-1, &status, 0);
    if (ended == program) break;
    if (ended < 0 && errno == EINTR) {
      kill(program, SIGTERM);  // the grader's SIGTERM reached init, not the program
      continue;
    }
    if (ended < 0) fail("waitpid");
  }
  (void)!write(report, &status, sizeof status);
  std::_Exit(0);
}

// Whether namespaces of `flags` (and a /proc of their own) can be had here, tried in a child
// so that nothing sticks.
bool child_can(int flags, bool mount_proc) {
  pid_t pid = fork();
  if (pid < 0) return false;
  if (pid == 0) {
    std::string why;
    if (!enter_user_namespace(flags, &why)) std::_Exit(1);
    if (!mount_proc) std::_Exit(0);
    pid_t inner = fork();
    if (inner < 0) std::_Exit(1);
    if (inner == 0) {
      if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) std::_Exit(1);
      std::_Exit(mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, nullptr) == 0
                     ? 0 : 1);
    }
    int status = wait_for(inner);
    std::_Exit(WIFEXITED(status) ? WEXITSTATUS(status) : 1);
  }
  int status = wait_for(pid);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

constexpr int kAllNamespaces = CLONE_NEWNET | CLONE_NEWNS | CLONE_NEWPID;

[[noreturn]] void run(const Options& options) {
  std::string why;
  // Everything at once where the kernel allows it; else without the PID and mount namespaces
  // (a container's masked /proc forbids a new proc mount), the program then in plain sight of
  // /proc; else without a network namespace, TCP then refused by Landlock.
  if (child_can(kAllNamespaces, true) && enter_user_namespace(kAllNamespaces, &why)) {
    int pipe_fds[2];
    if (pipe2(pipe_fds, O_CLOEXEC) != 0) fail("pipe");
    pid_t init = fork();
    if (init < 0) fail("fork");
    if (init == 0) {
      close(pipe_fds[0]);
      be_init(options, true, pipe_fds[1]);
    }
    close(pipe_fds[1]);
    for (int sig : {SIGTERM, SIGINT, SIGHUP}) std::signal(sig, [](int) {});
    int status = 0;
    for (;;) {
      if (waitpid(init, &status, 0) >= 0) break;
      if (errno != EINTR) fail("waitpid");
      kill(init, SIGTERM);
    }
    int program_status = 0;
    ssize_t got = read(pipe_fds[0], &program_status, sizeof program_status);
    end_like(got == sizeof program_status ? program_status : status);
  }
  bool network_isolated = enter_user_namespace(CLONE_NEWNET, &why);
  if (network_isolated && options.profiler) bring_loopback_up();
  restrict_self(options, network_isolated);
  limit_resources(options);
  execvp(options.program[0], options.program.data());
  fail(options.program[0]);
}

// What the sandbox can be here, tried in a child so nothing sticks: one JSON line.
int probe() {
  int abi = landlock_abi();
  bool user = child_can(0, false);
  bool net = child_can(CLONE_NEWNET, false);
  bool pid = child_can(kAllNamespaces, true);
  std::printf("{\"landlock_abi\": %d, \"user_namespace\": %s, \"network_namespace\": %s, "
              "\"pid_namespace\": %s}\n",
              abi, user ? "true" : "false", net ? "true" : "false", pid ? "true" : "false");
  return 0;
}

[[noreturn]] void usage(const char* problem) {
  std::fprintf(stderr,
               "course_sandbox: %s\nusage: course_sandbox --probe\n"
               "       course_sandbox [--read PATH]... [--write DIR]... [--fsize-mib N] [--profiler] -- "
               "PROGRAM [ARGS...]\n",
               problem);
  std::_Exit(125);
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--probe") return probe();
    if (arg == "--") {
      for (int j = i + 1; j < argc; ++j) options.program.push_back(argv[j]);
      break;
    }
    if (arg == "--profiler") {
      options.profiler = true;
      continue;
    }
    if (i + 1 >= argc) usage(("missing value after " + arg).c_str());
    if (arg == "--read") {
      options.read.emplace_back(argv[++i]);
    } else if (arg == "--write") {
      options.write.emplace_back(argv[++i]);
    } else if (arg == "--fsize-mib") {
      options.fsize_mib = std::strtol(argv[++i], nullptr, 10);
    } else {
      usage(("unknown option " + arg).c_str());
    }
  }
  if (options.program.empty()) usage("no program given");
  options.program.push_back(nullptr);
  run(options);
}
