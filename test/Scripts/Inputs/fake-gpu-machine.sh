#!/usr/bin/env bash
# Builds what gpu-session.test's dry run needs: a checkout root ROOT with
# the kit's scripts and a build/gpu-carry.tar.xz of stand-in programs
# (shell scripts that copy their input to their output), and a folder BIN
# of stand-in tools (nvidia-smi; compute-sanitizer, which runs the program
# and reports clean, except racecheck on HYLA, which reports a hazard).
#   fake-gpu-machine.sh SRC ROOT BIN IO.safetensors CONFIG.json
set -euo pipefail
src=$1 root=$2 bin=$3 io=$4 config=$5
mkdir -p "$root/scripts" "$root/build" "$bin" "$root/stage/build"
cp "$src"/scripts/{gpu-session.sh,gpu-carry.sh,cuda-golden.sh,compare_golden.py} "$root/scripts/"
program() { # dir
  mkdir -p "$1"
  cp "$io" "$1/io.safetensors"
  cp "$config" "$1/config.json"
  printf '#!/bin/sh\n# $1 = --input, $2 = file, $3 = --output, $4 = file\nif [ "$3" = --output ]; then cp "$2" "$4"; fi\n' \
    > "$1/program"
  chmod +x "$1/program"
}
g="$root/stage/build/cuda-golden"
mkdir -p "$g"
cp "$src/scripts/cuda-golden.sh" "$src/scripts/compare_golden.py" "$g/"
touch "$g/.cuda-golden"
for c in attention_rope_causal_gqa attention_rope_causal_gqa.bf16 ra_relpos_symbols \
    ra_relpos_symbols.bf16 hyla_softmax_default.bf16 ape_sequential_selfmha.bf16; do
  program "$g/$c"
done
# A bf16 case reads its rounded inputs.
for c in "$g"/*.bf16; do echo bf16 > "$c/precision"; cp "$io" "$c/input.safetensors"; done
program "$root/stage/build/gpu-session/tiny-dat-lm"
program "$root/stage/build/gpu-session/tiny-dat-lm.bf16"
program "$root/stage/build/gpu-session/tiny-dat-lm.bf16-generated"
program "$root/stage/build/gpu-session/coarse-lm.bf16"
# One benchmark entry, its inputs made already (run.py makes them with
# torch there).
program "$root/stage/build/bench/K1-fake.bf16"
mv "$root/stage/build/bench/K1-fake.bf16/program" "$root/stage/build/bench/K1-fake.bf16/prog"
cp "$io" "$root/stage/build/bench/K1-fake.bf16/input.safetensors"
echo K1-fake.bf16 > "$root/stage/build/bench/.session-entries"
# xz through Python's tarfile, as the kit unpacks it (no xz binary needed).
python3 -c 'import sys, tarfile; t = tarfile.open(sys.argv[1], "w:xz"); t.add(sys.argv[2], "build"); t.close()' \
  "$root/build/gpu-carry.tar.xz" "$root/stage/build"
rm -rf "$root/stage"

printf '#!/bin/sh\nif [ "$#" -gt 0 ]; then echo "Fake GPU, 1.0"; else echo "fake nvidia-smi"; fi\n' \
  > "$bin/nvidia-smi"
cat > "$bin/compute-sanitizer" <<'SAN'
#!/bin/sh
# compute-sanitizer --tool T --error-exitcode N [options] PROGRAM ARGS...
tool=$2 code=$4
shift 4
while [ "${1#--}" != "$1" ]; do shift 2; done
"$@" > /dev/null || exit $?
echo "========= COMPUTE-SANITIZER"
case "$tool:$1" in
racecheck:*hyla*)
  echo "========= Error: Race reported between Write access and Read access"
  echo "========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)"
  exit "$code" ;;
racecheck:*) echo "========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)" ;;
*) echo "========= ERROR SUMMARY: 0 errors" ;;
esac
SAN
# ncu: says it profiled (its arguments end with the program and --input).
printf '#!/bin/sh\necho "==PROF== Profiling forward_attention_tile"\necho "    Duration                         usecond       123.45"\necho "    Achieved Occupancy                     %%        42.00"\n' > "$bin/ncu"
chmod +x "$bin/nvidia-smi" "$bin/compute-sanitizer" "$bin/ncu"
