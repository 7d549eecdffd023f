/*
 * Test-only stand-in for bcryptprimitives.dll, for running Windows builds of koma under Wine.
 *
 * Rust's std (1.78+) on Windows imports ProcessPrng from bcryptprimitives.dll for its random
 * numbers (HashMap seeds and the like). Wine 8 (Debian bookworm's wine64 8.0) has no
 * bcryptprimitives.dll, so every Rust .exe fails to load there. This DLL exports ProcessPrng
 * on top of RtlGenRandom (SystemFunction036 in advapi32), which Wine does have.
 *
 * It never ships: real Windows (8.1 and later) has its own bcryptprimitives.dll. It is only
 * put beside the .exe in throwaway test folders (scripts/windows/build-shim.sh OUTDIR).
 * Where Wine has the DLL already, a copy beside the .exe still works (the local one wins).
 */
#include <windows.h>

/* RtlGenRandom; the header declares it only under a name macro, so declare it here. */
BOOLEAN WINAPI SystemFunction036(PVOID RandomBuffer, ULONG RandomBufferLength);

BOOL WINAPI ProcessPrng(PBYTE pbData, SIZE_T cbData)
{
    /* RtlGenRandom takes a ULONG length: feed it in chunks of at most 1 GiB. */
    while (cbData > 0) {
        ULONG chunk = cbData > 0x40000000u ? 0x40000000u : (ULONG)cbData;
        if (!SystemFunction036(pbData, chunk))
            return FALSE;
        pbData += chunk;
        cbData -= chunk;
    }
    /* Like the real one, which documents that it always returns TRUE. */
    return TRUE;
}

BOOL WINAPI DllMain(HINSTANCE inst, DWORD reason, LPVOID reserved)
{
    (void)inst; (void)reason; (void)reserved;
    return TRUE;
}
