/* Calls kforge's mgpu runtime's kforge_tensor_map_2d the way lowered host code does before a TMA kernel's
 * launch: the same tensor twice (the second call must reuse the first map), another box of it, 65 more
 * tensors (the cache holds 64: the device is synchronised before slots are reused), then elements of 3 bytes
 * (unsupported: the runtime aborts with a message). */
#include <stdint.h>
#include <stdio.h>

uint64_t kforge_tensor_map_2d(uint64_t address, uint64_t rows, uint64_t cols, uint64_t rowBytes, uint64_t boxRows,
                              uint64_t boxCols, uint64_t elementBytes);

int main(void) {
  uint64_t first = kforge_tensor_map_2d(0x10000, 4096, 2048, 4096, 128, 64, 2);
  uint64_t again = kforge_tensor_map_2d(0x10000, 4096, 2048, 4096, 128, 64, 2);
  uint64_t otherBox = kforge_tensor_map_2d(0x10000, 4096, 2048, 4096, 64, 64, 2);
  fprintf(stderr, "same map: %s; another box, another map: %s; 128 bytes apart: %s\n", first == again ? "yes" : "no",
          otherBox != first ? "yes" : "no", otherBox - first == 128 ? "yes" : "no");
  for (uint64_t i = 0; i < 65; ++i)
    kforge_tensor_map_2d(0x20000 + i * 0x1000, 64, 64, 128, 64, 64, 2);
  fprintf(stderr, "elements of 3 bytes\n");
  kforge_tensor_map_2d(0x10000, 16, 16, 48, 16, 16, 3);
  return 0;
}
