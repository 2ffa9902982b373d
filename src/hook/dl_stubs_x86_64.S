/* The exported dlsym and dlopen: see dlsym.c and deepbind.c. Both keep the
 * caller's return address for the C library: dlsym(RTLD_NEXT) means "next
 * after the caller", and dlopen searches the caller's RPATH/RUNPATH, so a
 * C wrapper calling on would silently change what either finds. */
#if defined(__x86_64__)
    .text
    .globl dlsym
    .type dlsym, @function
    .globl cc_dlsym_stub
    .hidden cc_dlsym_stub
    .p2align 4
dlsym:
cc_dlsym_stub:                     /* our own address, whoever else exports dlsym */
    .cfi_startproc
    endbr64
    pushq %rdi
    .cfi_adjust_cfa_offset 8
    pushq %rsi
    .cfi_adjust_cfa_offset 8
    subq $8, %rsp                  /* keep the stack 16-byte aligned */
    .cfi_adjust_cfa_offset 8
    call cc_dlsym_lookup
    addq $8, %rsp
    .cfi_adjust_cfa_offset -8
    popq %rsi
    .cfi_adjust_cfa_offset -8
    popq %rdi
    .cfi_adjust_cfa_offset -8
    testq %rax, %rax
    jnz 1f
    jmpq *cc_real_dlsym(%rip)      /* tail jump: the caller's return address stays */
1:
    ret
    .cfi_endproc
    .size dlsym, .-dlsym

/* void *dlopen(const char *file, int mode): cc_dlopen_target answers the
 * C library's dlopen (jumped to: the caller stays the caller), or NULL for
 * RTLD_DEEPBIND, which goes to cc_dlopen_deep(file, mode, return address). */
    .globl dlopen
    .type dlopen, @function
    .globl cc_dlopen_stub
    .hidden cc_dlopen_stub
    .p2align 4
dlopen:
cc_dlopen_stub:
    .cfi_startproc
    endbr64
    pushq %rdi
    .cfi_adjust_cfa_offset 8
    pushq %rsi
    .cfi_adjust_cfa_offset 8
    subq $8, %rsp
    .cfi_adjust_cfa_offset 8
    call cc_dlopen_target
    addq $8, %rsp
    .cfi_adjust_cfa_offset -8
    popq %rsi
    .cfi_adjust_cfa_offset -8
    popq %rdi
    .cfi_adjust_cfa_offset -8
    testq %rax, %rax
    jz 2f
    jmpq *%rax                     /* the C library's dlopen, as if called directly */
2:
    movq (%rsp), %rdx              /* the caller's return address */
    jmp cc_dlopen_deep             /* tail call: it returns to the caller */
    .cfi_endproc
    .size dlopen, .-dlopen
#endif
    .section .note.GNU-stack,"",@progbits
