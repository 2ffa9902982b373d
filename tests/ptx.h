/* A module image that loads on both the simulator (which accepts any image
 * and times spin_<N>us by its name) and a real driver (which JIT-compiles this
 * PTX: the kernels are empty there). */
#ifndef CC_TEST_PTX_H
#define CC_TEST_PTX_H
static const char test_ptx[] =
    ".version 7.0\n.target sm_70\n.address_size 64\n"
    ".visible .entry spin_0us()\n{\n\tret;\n}\n"
    ".visible .entry spin_10us()\n{\n\tret;\n}\n";
#endif
