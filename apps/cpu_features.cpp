// The x86 features the rest of this program was compiled to use, from the
// compiler's predefined macros under MFT_ARCH: data only (no code, so no
// instruction the CPU may lack), read by the start-up check in cpu_check.cpp,
// which knows the same names (a name it does not know counts as missing, so
// the two lists cannot drift apart unnoticed).
extern "C" const char mft_compiled_cpu_features[] = ""
#ifdef __POPCNT__
                                                    " popcnt"
#endif
#ifdef __SSE4_1__
                                                    " sse4.1"
#endif
#ifdef __SSE4_2__
                                                    " sse4.2"
#endif
#ifdef __AVX__
                                                    " avx"
#endif
#ifdef __AVX2__
                                                    " avx2"
#endif
#ifdef __FMA__
                                                    " fma"
#endif
#ifdef __F16C__
                                                    " f16c"
#endif
#ifdef __BMI__
                                                    " bmi"
#endif
#ifdef __BMI2__
                                                    " bmi2"
#endif
#ifdef __LZCNT__
                                                    " lzcnt"
#endif
#ifdef __MOVBE__
                                                    " movbe"
#endif
#ifdef __AVX512F__
                                                    " avx512f"
#endif
#ifdef __AVX512DQ__
                                                    " avx512dq"
#endif
#ifdef __AVX512CD__
                                                    " avx512cd"
#endif
#ifdef __AVX512BW__
                                                    " avx512bw"
#endif
#ifdef __AVX512VL__
                                                    " avx512vl"
#endif
#ifdef __AVX512VNNI__
                                                    " avx512vnni"
#endif
#ifdef __AVX512VBMI__
                                                    " avx512vbmi"
#endif
#ifdef __AVX512VBMI2__
                                                    " avx512vbmi2"
#endif
#ifdef __AVX512IFMA__
                                                    " avx512ifma"
#endif
#ifdef __AVX512VPOPCNTDQ__
                                                    " avx512vpopcntdq"
#endif
#ifdef __AVX512BITALG__
                                                    " avx512bitalg"
#endif
#ifdef __AVX512BF16__
                                                    " avx512bf16"
#endif
#ifdef __AVX512FP16__
                                                    " avx512fp16"
#endif
#ifdef __GFNI__
                                                    " gfni"
#endif
#ifdef __VAES__
                                                    " vaes"
#endif
#ifdef __VPCLMULQDQ__
                                                    " vpclmulqdq"
#endif
#ifdef __AVXVNNI__
                                                    " avxvnni"
#endif
    ;
