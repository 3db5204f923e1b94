#!/bin/bash
cmd=$1; shift
exec /work/main/build/bin/datc "$cmd" --pipeline relative-symbols-as-product=true "$@"
