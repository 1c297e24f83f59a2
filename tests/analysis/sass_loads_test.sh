#!/usr/bin/env bash
# scripts/sass-loads on a canned cuobjdump listing: a load whose result is read before the next
# load issues is counted (a 16-byte load unpacked at once; the upper register of an 8-byte load;
# a loaded address), loads issued back to back are not, nor a use past a branch, nor the last load
# of a stretch; --kernels picks kernels and --fail sets the exit status.
set -euo pipefail
src=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cat >"$work/k.sass" <<'SASS'
	code for sm_90
		Function : _Z5waitsPKfPf
	.headerflags	@"EF_CUDA_VIRTUAL_SM(EF_CUDA_SM90)"
        /*0000*/                   LDC R1, c[0x0][0x28] ;                    /* 0x00000a00ff017b82 */
        /*0010*/              @!P3 LDG.E.128.CONSTANT R4, desc[UR12][R2.64+0x1000] ;
        /*0020*/              @!P3 PRMT R18, R4, 0x7610, R18 ;
        /*0030*/                   LDG.E.128.CONSTANT R4, desc[UR12][R2.64+0x2000] ;
        /*0040*/                   PRMT R19, R5, 0x7610, R19 ;
        /*0050*/                   EXIT ;
		Function : _Z7flowingPKfPf
        /*0000*/                   LDG.E.128.CONSTANT R4, desc[UR4][R2.64] ;
        /*0010*/                   LDG.E.128.CONSTANT R8, desc[UR4][R2.64+0x1000] ;
        /*0020*/                   FMNMX R12, R4, R8, !PT ;
        /*0030*/                   STG.E desc[UR4][R14.64], R12 ;
        /*0040*/                   EXIT ;
		Function : _Z8branchedPKfPf
        /*0000*/                   LDG.E R4, desc[UR4][R2.64] ;
        /*0010*/                   BRA 0x30 ;
        /*0020*/                   IADD3 R6, R4, 0x1, RZ ;
        /*0030*/                   LDG.E R8, desc[UR4][R2.64+0x4] ;
        /*0040*/                   EXIT ;
		Function : _Z4widePKdPd
        /*0000*/                   LDG.E.64 R4, desc[UR4][R2.64] ;
        /*0010*/                   IADD3 R6, R5, 0x1, RZ ;
        /*0020*/                   LDG.E R8, desc[UR4][R2.64+0x8] ;
        /*0030*/                   LDG.E R9, desc[UR4][R8.64] ;
        /*0040*/                   LDG.E R10, desc[UR4][R2.64+0x10] ;
        /*0050*/                   EXIT ;
SASS
out=$("$src/scripts/sass-loads" "$work/k.sass")
echo "$out"
grep -q '^1 of 2 loads wait: waits(float const\*, float\*)$' <<<"$out"
grep -q '^2 of 4 loads wait: wide(double const\*, double\*)$' <<<"$out"
grep -q '0010: @!P3 LDG.E.128.CONSTANT R4, desc\[UR12\]\[R2.64+0x1000\]' <<<"$out"
grep -q '0020: LDG.E R8, desc\[UR4\]\[R2.64+0x8\]' <<<"$out"
! grep -q 'flowing\|branched' <<<"$out"
grep -q '^2 kernel(s) with a load' <<<"$out"
# --kernels on the mangled names; the listing through stdin
out=$("$src/scripts/sass-loads" - --kernels '_Z7flowing' <"$work/k.sass")
grep -q '^0 kernel(s)' <<<"$out"
# --fail: 1 when a load waits, 0 when none does
"$src/scripts/sass-loads" "$work/k.sass" --fail >/dev/null && { echo "--fail should have failed"; exit 1; }
"$src/scripts/sass-loads" "$work/k.sass" --fail --kernels 'flowing|branched' >/dev/null
# a file that is not there: one line naming it, non-zero
if err=$("$src/scripts/sass-loads" "$work/none.sass" 2>&1); then echo "a missing file should fail"; exit 1; fi
grep -q "cannot read $work/none.sass" <<<"$err"
echo "sass-loads: ok"
