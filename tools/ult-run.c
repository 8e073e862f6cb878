int
main(void)
{
	return (127);
}
