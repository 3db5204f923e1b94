#!/bin/sh
# A stand-in cuobjdump for kernel-report.test: the SASS of a kernel `k` with
# a key loop (0x10-0x50, holding the HMMA) around a nested loop (0x20-0x30),
# a larger loop without tensor-core work (0x60-0xb0) and the kernel's
# closing self-branch.
cat <<'SASS'
		Function : k
        /*0000*/                   MOV R1, c[0x0][0x28] ;
        /*0010*/                   HMMA.16816.F32.BF16 R4, R8, R12, R4 ;
        /*0020*/                   FADD R2, R2, R3 ;
        /*0030*/              @P0 BRA 0x20 ;
        /*0040*/                   FMUL R2, R2, R3 ;
        /*0050*/              @!P1 BRA 0x10 ;
        /*0060*/                   FADD R2, R2, R3 ;
        /*0070*/                   FADD R2, R2, R3 ;
        /*0080*/                   FADD R2, R2, R3 ;
        /*0090*/                   FADD R2, R2, R3 ;
        /*00a0*/                   FADD R2, R2, R3 ;
        /*00b0*/              @P2 BRA 0x60 ;
        /*00c0*/                   EXIT ;
        /*00d0*/                   BRA 0xd0 ;
SASS
