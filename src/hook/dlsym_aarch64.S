/* void *dlsym(void *handle, const char *name): see dlsym.c. */
#if defined(__aarch64__)
    .text
    .globl dlsym
    .type dlsym, %function
    .p2align 4
dlsym:
    .cfi_startproc
    stp x29, x30, [sp, #-32]!
    .cfi_def_cfa_offset 32
    .cfi_offset 29, -32
    .cfi_offset 30, -24
    mov x29, sp
    stp x0, x1, [sp, #16]
    bl cc_dlsym_lookup
    cbnz x0, 1f
    ldp x0, x1, [sp, #16]
    ldp x29, x30, [sp], #32
    adrp x16, cc_real_dlsym
    ldr x16, [x16, :lo12:cc_real_dlsym]
    br x16                         /* tail jump: x30 is the caller's again */
1:
    ldp x29, x30, [sp], #32
    ret
    .cfi_endproc
    .size dlsym, .-dlsym
#endif
    .section .note.GNU-stack,"",%progbits
