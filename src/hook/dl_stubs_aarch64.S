/* The exported dlsym and dlopen: see dl_stubs_x86_64.S, dlsym.c and
 * deepbind.c. x30 is the caller's return address again at each tail jump. */
#if defined(__aarch64__)
    .text
    .globl dlsym
    .type dlsym, %function
    .globl cc_dlsym_stub
    .hidden cc_dlsym_stub
    .p2align 4
dlsym:
cc_dlsym_stub:
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

    .globl dlopen
    .type dlopen, %function
    .globl cc_dlopen_stub
    .hidden cc_dlopen_stub
    .p2align 4
dlopen:
cc_dlopen_stub:
    .cfi_startproc
    stp x29, x30, [sp, #-32]!
    .cfi_def_cfa_offset 32
    .cfi_offset 29, -32
    .cfi_offset 30, -24
    mov x29, sp
    stp x0, x1, [sp, #16]
    bl cc_dlopen_target
    mov x16, x0
    ldp x0, x1, [sp, #16]
    ldp x29, x30, [sp], #32
    cbz x16, 2f
    br x16                         /* the C library's dlopen, as if called directly */
2:
    mov x2, x30                    /* the caller's return address */
    b cc_dlopen_deep
    .cfi_endproc
    .size dlopen, .-dlopen
#endif
    .section .note.GNU-stack,"",%progbits
