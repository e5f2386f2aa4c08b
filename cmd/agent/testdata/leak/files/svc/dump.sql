-- MySQL dump
CREATE TABLE `users` (
  `id` int NOT NULL,
  `login` varchar(64),
  `password` varchar(128),
  PRIMARY KEY (`id`)
);
INSERT INTO `users` VALUES (1,'admin','SqlIns-1106af{{.N}}'),(2,'bob','SqlIns2-1107ag{{.N}}');
COPY public.accounts (id, email, pwd) FROM stdin;
3	carol@example.org	SqlCopy-1108ah{{.N}}
\.
