#!/usr/bin/env bash
# The runner's own cost (docs/architecture.md#benchmarks): points/s on a grid of cheap points with 1, 2 and 4
# (oversubscribed) ranks, and the fraction of rank time left idle on a grid of uneven points
# (1 − Σ point seconds / (ranks × wall seconds)).
set -euo pipefail
bin=${1:-build/bin}
py=/usr/bin/python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
spreads=$($py -c "print(','.join(str(0.01 * i) for i in range(1, 201)))")
cheap=(--n 2,4,8,16,32 --spread "$spreads" --trials 1 --threads 1 --quiet)   # 1000 points of < 1 µs work
now() { date +%s.%N; }

report() {  # label points seconds
  $py -c "import sys; l, p, s = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]); print(f'{l}: {p} points in {s:.2f} s = {p/s:.0f} points/s ({1e3*s/p:.2f} ms per point)')" "$@"
}

t0=$(now); "$bin/sharp-bounds" "${cheap[@]}" --out "$tmp/c1.h5"; t1=$(now)
report "local, 1 thread" 1000 "$($py -c "print($t1 - $t0)")"
for r in 1 2 4; do
  t0=$(now); mpirun -np "$r" "$bin/sharp-bounds" "${cheap[@]}" --out "$tmp/c$r-mpi.h5"; t1=$(now)
  report "mpirun -np $r" 1000 "$($py -c "print($t1 - $t0)")"
done

uneven=(--n 2^12..2^26 --spread 1,2,4,8 --trials 8 --threads 1 --quiet)  # costs differ by 2^14
for r in 2 3; do
  t0=$(now); mpirun -np "$r" "$bin/sharp-bounds" "${uneven[@]}" --out "$tmp/u$r.h5"; t1=$(now)
  $py - "$tmp/u$r.h5" "$r" "$($py -c "print($t1 - $t0)")" <<'PY'
import sys, h5py
path, ranks, wall = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
with h5py.File(path, "r") as f:
    busy = float(f["timing/wall_seconds"][()].sum())
print(f"uneven grid (60 points, costs 1:16384), mpirun -np {ranks}: wall {wall:.2f} s, "
      f"busy {busy:.2f} rank-s, idle fraction {1 - busy / (ranks * wall):.1%} (includes start-up and merge)")
PY
done
