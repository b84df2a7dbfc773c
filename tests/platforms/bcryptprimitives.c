/* Test-only stand-in for bcryptprimitives.dll, which Wine 8.0 lacks: Rust's std imports its
 * ProcessPrng, so without it no Rust .exe or DLL starts under Wine (status c0000135). It is
 * placed beside the test .exe only, and never shipped; Windows 10+ has the real one. */
#include <windows.h>
#include <ntsecapi.h> /* RtlGenRandom (advapi32's SystemFunction036) */

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {
  /* RtlGenRandom takes a ULONG length: feed larger requests in pieces. */
  while (len > 0) {
    ULONG chunk = len > 0x10000000 ? 0x10000000 : (ULONG)len;
    if (!RtlGenRandom(data, chunk)) return FALSE;
    data += chunk;
    len -= chunk;
  }
  return TRUE;
}
