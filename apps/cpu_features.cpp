// The x86 features the rest of this program was compiled to use, from the
// compiler's predefined macros under MFT_ARCH: data only (no code, so no
// instruction the CPU may lack), read by the start-up check in cpu_check.cpp.
extern "C" const char mft_compiled_cpu_features[] = ""
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
#ifdef __BMI2__
                                                    " bmi2"
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
    ;
