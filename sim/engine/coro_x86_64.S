/*
 * The coroutine context switch for x86-64 System V (used by sim/engine/coro.c). A suspended
 * coroutine's stack holds, from its saved stack pointer up: MXCSR (4 bytes), the x87
 * control word (2 bytes, padded to 4), r15, r14, r13, r12, rbx, rbp and the return
 * address. Everything else is caller-saved, so nothing more is kept; the signal mask is
 * not touched (no system call per switch). On other architectures this file is empty.
 */
/* The same condition as SIM_CORO_ASM in sim/engine/coro.h. */
#if defined(__x86_64__) && !defined(SIM_CORO_FORCE_UCONTEXT)

    .text

/* void sim_coro_swap_x86_64(void **save_sp, void *load_sp)
 * Push the callee-saved state, store rsp into *save_sp, switch to load_sp, pop its state
 * and return into the resumed coroutine. MXCSR and the x87 control word are reloaded only
 * when the resumed coroutine's differ from the current ones (they rarely do, and the loads
 * are slow); MXCSR's status flags (bits 0-5) are caller-saved in the ABI, so only its
 * control bits are compared. The resumed coroutine's return address is popped and jumped
 * to rather than returned to: after a stack switch the CPU's return-stack prediction is
 * always wrong, while the indirect jump's target is predicted (as Boost.Context does); on
 * this machine that took a switch from about 16 ns to under 4. */
    .globl  sim_coro_swap_x86_64
    .hidden sim_coro_swap_x86_64
    .type   sim_coro_swap_x86_64, @function
    .p2align 4
sim_coro_swap_x86_64:
    .cfi_startproc
    pushq   %rbp
    pushq   %rbx
    pushq   %r12
    pushq   %r13
    pushq   %r14
    pushq   %r15
    subq    $8, %rsp
    stmxcsr (%rsp)
    fnstcw  4(%rsp)
    movl    (%rsp), %eax
    movzwl  4(%rsp), %edx
    movq    %rsp, (%rdi)
    movq    %rsi, %rsp
    xorl    (%rsp), %eax
    testl   $0xffc0, %eax
    jnz     .Lload_mxcsr
.Lcheck_fpucw:
    cmpw    4(%rsp), %dx
    jne     .Lload_fpucw
.Lpop:
    addq    $8, %rsp
    popq    %r15
    popq    %r14
    popq    %r13
    popq    %r12
    popq    %rbx
    popq    %rbp
    popq    %rcx
    jmpq    *%rcx
.Lload_mxcsr:
    ldmxcsr (%rsp)
    jmp     .Lcheck_fpucw
.Lload_fpucw:
    fldcw   4(%rsp)
    jmp     .Lpop
    .cfi_endproc
    .size   sim_coro_swap_x86_64, .-sim_coro_swap_x86_64

/* First entry of a coroutine: the initial frame built by sim_coro_start "returns" here
 * with r12 = entry function and r13 = its argument, rsp 16-byte aligned. The entry
 * function never returns; ud2 traps if it does. */
    .globl  sim_coro_entry_x86_64
    .hidden sim_coro_entry_x86_64
    .type   sim_coro_entry_x86_64, @function
    .p2align 4
sim_coro_entry_x86_64:
    .cfi_startproc
    .cfi_undefined rip
    movq    %r13, %rdi
    callq   *%r12
    ud2
    .cfi_endproc
    .size   sim_coro_entry_x86_64, .-sim_coro_entry_x86_64

#endif

#if defined(__ELF__)
    .section .note.GNU-stack, "", %progbits
#endif
