const char* a = "#include \"/etc/passwd\" <<<";
const char* b = R"x(
#define Q 1
)x";
int c = 1'000'000;
char d = '"';
/* #define X
 */ // <<< in a comment
#define STR(x) #x
#define JOIN(a, b) a##b
