//===- FuzzMain.cpp - a libFuzzer-compatible driver without libFuzzer -----===//
//
// Part of the dat project: a compiler for relational-attention models.
//
// Builds where libFuzzer is not available (the GCC build that the test suite
// uses) run the same `LLVMFuzzerTestOneInput` targets with this driver:
// every seed file once, then `-runs=N` deterministic mutations of the seeds
// (byte flips, insertions, deletions, truncations, splices, interesting
// integers). No coverage guidance: the long, guided runs are the libFuzzer
// build's job (README "Reliability"). A crash aborts the process, so a test
// that runs the driver fails; `-print-input` names the input first.
//
//   dat-fuzz-X [-runs=N] [-seed=S] [-max_len=B] [-timeout=SECONDS]
//              [-artifact=FILE] FILE_OR_DIR...
//
//===----------------------------------------------------------------------===//

#include <algorithm>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
// Optional, as in libFuzzer: a structure-aware mutation of `data` in place.
extern "C" __attribute__((weak)) size_t LLVMFuzzerCustomMutator(
    uint8_t *data, size_t size, size_t maxSize, unsigned int seed);

namespace {

// The input being run, written out by the crash handler so that a finding
// can be replayed (and turned into a regression test).
const std::string *gCurrent = nullptr;
std::string gArtifact = "crash-input";

extern "C" void onCrash(int sig) {
  if (gCurrent) {
    int fd = open(gArtifact.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      ssize_t ignored = write(fd, gCurrent->data(), gCurrent->size());
      (void)ignored;
      close(fd);
    }
    const char msg[] =
        "fuzz: crash or timeout; the input is in the artifact file\n";
    ssize_t ignored = write(2, msg, sizeof msg - 1);
    (void)ignored;
  }
  signal(sig, SIG_DFL);
  raise(sig);
}

unsigned gTimeout = 0; // seconds per input, 0 = none

void runOne(const std::string &input) {
  gCurrent = &input;
  if (gTimeout)
    alarm(gTimeout);
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t *>(input.data()),
                         input.size());
  if (gTimeout)
    alarm(0);
  gCurrent = nullptr;
}

void addFile(const std::string &path, std::vector<std::string> &seeds,
             size_t maxLen) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  std::string data = ss.str();
  if (data.size() <= maxLen)
    seeds.push_back(std::move(data));
}

void addPath(const std::string &path, std::vector<std::string> &seeds,
             size_t maxLen) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    std::fprintf(stderr, "fuzz: cannot read %s\n", path.c_str());
    std::exit(2);
  }
  if (!S_ISDIR(st.st_mode))
    return addFile(path, seeds, maxLen);
  DIR *dir = opendir(path.c_str());
  std::vector<std::string> names;
  while (dirent *e = readdir(dir))
    if (e->d_name[0] != '.')
      names.push_back(e->d_name);
  closedir(dir);
  std::sort(names.begin(), names.end()); // deterministic order
  for (const std::string &n : names)
    addPath(path + "/" + n, seeds, maxLen);
}

std::string mutate(std::string s, const std::vector<std::string> &seeds,
                   std::mt19937_64 &rng) {
  auto pick = [&](size_t n) { return n ? rng() % n : 0; };
  static const int64_t interesting[] = {
      0, 1, -1, 255, 65535, 0x7fffffff, 1ll << 40, INT64_MAX, INT64_MIN};
  int edits = 1 + pick(4);
  for (int e = 0; e < edits; ++e) {
    switch (pick(7)) {
    case 0: // flip a bit
      if (!s.empty())
        s[pick(s.size())] ^= char(1 << pick(8));
      break;
    case 1: // set a random byte
      if (!s.empty())
        s[pick(s.size())] = char(rng());
      break;
    case 2: // insert bytes
      s.insert(pick(s.size() + 1), std::string(1 + pick(8), char(rng())));
      break;
    case 3: // delete a range
      if (!s.empty()) {
        size_t at = pick(s.size());
        s.erase(at, 1 + pick(std::min<size_t>(16, s.size() - at)));
      }
      break;
    case 4: // truncate
      s.resize(pick(s.size() + 1));
      break;
    case 5: { // splice another seed's tail
      const std::string &o = seeds[pick(seeds.size())];
      size_t at = pick(s.size() + 1);
      s = s.substr(0, at) + o.substr(pick(o.size() + 1));
      break;
    }
    case 6: { // an interesting integer, as text or as 8 bytes
      int64_t v = interesting[pick(sizeof(interesting) / sizeof(int64_t))];
      size_t at = pick(s.size() + 1);
      if (rng() & 1)
        s.insert(at, std::to_string(v));
      else
        s.insert(at, reinterpret_cast<const char *>(&v), sizeof v);
      break;
    }
    }
  }
  return s;
}

} // namespace

int main(int argc, char **argv) {
  long runs = 0;
  uint64_t seed = 1;
  size_t maxLen = 1 << 20;
  bool print = false;
  std::vector<std::string> seeds;
  std::vector<std::string> paths;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("-runs=", 0) == 0)
      runs = std::atol(a.c_str() + 6);
    else if (a.rfind("-seed=", 0) == 0)
      seed = std::strtoull(a.c_str() + 6, nullptr, 10);
    else if (a.rfind("-max_len=", 0) == 0)
      maxLen = std::strtoull(a.c_str() + 9, nullptr, 10);
    else if (a == "-print-input")
      print = true;
    else if (a.rfind("-artifact=", 0) == 0)
      gArtifact = a.substr(10);
    else if (a.rfind("-timeout=", 0) == 0)
      gTimeout = std::atoi(a.c_str() + 9);
    else if (a[0] == '-')
      std::fprintf(stderr, "fuzz: ignoring libFuzzer option %s\n", a.c_str());
    else
      paths.push_back(a);
  }
  for (const std::string &p : paths)
    addPath(p, seeds, maxLen);
  if (seeds.empty())
    seeds.push_back("");
  // SIGALRM: an input ran past -timeout; SIGTERM: the whole run was killed
  // (e.g. by `timeout`). Either way the input is written out.
  for (int sig : {SIGSEGV, SIGABRT, SIGBUS, SIGFPE, SIGILL, SIGALRM, SIGTERM})
    signal(sig, onCrash);
  for (const std::string &s : seeds)
    runOne(s);
  std::mt19937_64 rng(seed);
  for (long r = 0; r < runs; ++r) {
    std::string input;
    if (LLVMFuzzerCustomMutator && rng() % 4 != 0) {
      const std::string &seedInput = seeds[rng() % seeds.size()];
      size_t maxSize = 2 * seedInput.size() + 4096;
      input = seedInput;
      input.resize(maxSize);
      input.resize(LLVMFuzzerCustomMutator(
          reinterpret_cast<uint8_t *>(input.data()), seedInput.size(), maxSize,
          static_cast<unsigned>(rng())));
    } else {
      input = mutate(seeds[rng() % seeds.size()], seeds, rng);
    }
    if (input.size() > maxLen)
      input.resize(maxLen);
    if (print)
      std::fprintf(stderr, "fuzz: run %ld (%zu bytes)\n", r, input.size());
    runOne(input);
  }
  std::printf("fuzz: %zu seeds and %ld mutated inputs ran without a crash\n",
              seeds.size(), runs);
  return 0;
}
