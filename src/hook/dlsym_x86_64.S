/* void *dlsym(void *handle, const char *name): see dlsym.c. */
#if defined(__x86_64__)
    .text
    .globl dlsym
    .type dlsym, @function
    .p2align 4
dlsym:
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
#endif
    .section .note.GNU-stack,"",@progbits
