#!/bin/bash
# bench_ratio.sh BENCHBIN PATTERN_A PATTERN_B ROUNDS BENCHTIME: runs the Go benchmarks
# matching A then B (a test binary from go test -c), ROUNDS times alternately, and prints
# each round's ms per op of A and B and their ratio B/A, sorted, and the median round:
# side by side on a shared machine, the ratio of neighbouring runs is steadier than
# either time.
bin=$1; a=$2; b=$3; n=$4; bt=$5
cd "$(dirname "$0")/../forest"
for r in $(seq $n); do
  ta=$($bin -test.run XXX -test.bench "$a" -test.benchtime $bt 2>&1 | awk '/^Benchmark/{print $3}')
  tb=$($bin -test.run XXX -test.bench "$b" -test.benchtime $bt 2>&1 | awk '/^Benchmark/{print $3}')
  echo "$ta $tb" | awk '{printf "%.1f %.1f %.3f\n", $1/1e6, $2/1e6, $2/$1}'
done | sort -k3 -n | awk '{a[NR]=$0} END{for(i=1;i<=NR;i++) print a[i]; print "median:", a[int((NR+1)/2)]}'
