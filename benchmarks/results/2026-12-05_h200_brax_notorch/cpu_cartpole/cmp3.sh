#!/usr/bin/env bash
# base = `git archive 57290f7 src` unpacked in /work/main/.device_base, v87 = `git archive 87eb367 src` in /tmp/v87
# brax Cartpole on CPU: base 57290f7, 87eb367 (torch beside epoch 1), HEAD (torch after epoch 1), interleaved
cd /work/main
export GIT_PYTHON_REFRESH=quiet JAX_PLATFORMS=cpu CUDA_VISIBLE_DEVICES=""
for round in 1 2 3; do
  for v in base v87 head; do
    case $v in base) src=/work/main/.device_base/src;; v87) src=/tmp/v87/src;; head) src=/work/main/src;; esac
    d=/tmp/cmp3/$v$round; rm -rf $d; mkdir -p $d
    t0=$(date +%s.%N)
    (cd $d && JAX_COMPILATION_CACHE_DIR=/tmp/cmp3/jc_$v PYTHONPATH=$src /work/main/.venv/bin/python -m fleetlab train --library brax --task Isaac-Cartpole-v0 --num_envs 64 --max_iterations 30 --headless --device cpu > out.log 2>&1)
    t1=$(date +%s.%N)
    python3 - $d $v $round $(python3 -c "print(round($t1-$t0,2))") <<'PY'
import json,glob,sys
d,v,r,w=sys.argv[1:]
s=json.load(open(glob.glob(d+'/logs/**/summary.json',recursive=True)[0]))
f,p=s['final'],s['perf']
print(v,r,'wall',w,'startup',round(p['startup_s'],2),'learn',round(f['learn_start_s'],2),'ep',[round(x,2) for x in f['epoch_end_s']],'checksum',s['ranks'][0]['checksum'] if 'ranks' in s else '')
PY
  done
done
